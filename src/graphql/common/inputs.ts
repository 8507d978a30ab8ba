import type { Services } from "../../container.js";
import type { Nullable } from "./nulls.js";

type Method<S extends keyof Services, M extends keyof Services[S]> = Services[S][M] extends (...args: never[]) => unknown ? Services[S][M] : never;

type LastObject<P extends unknown[]> = P extends [...infer Rest, infer L] ? (NonNullable<L> extends object ? NonNullable<L> : LastObject<Rest>) : never;

/**
 * What a service method takes as its input: its last object parameter, the zod input type of the
 * schema it parses with (ctx and path ids come before it, a cookie's binding may come after). The
 * input counterpart of `ViewOf`.
 */
export type InputOf<S extends keyof Services, M extends keyof Services[S]> = LastObject<Required<Parameters<Method<S, M>>>>;

/**
 * A service input as GraphQL can vouch for it: the scalar types, not the values. A String field
 * behind a zod enum carries any string until the service parses it (VALIDATION_ERROR, as REST
 * answers), a JSON field any JSON, a Boolean behind `z.literal(true)` false as well.
 */
export type Loose<T> = T extends string
  ? string
  : T extends boolean
    ? boolean
    : T extends readonly (infer E)[]
      ? Loose<E>[]
      : T extends Date
        ? T
        : T extends object
          ? string extends keyof T
            ? unknown // a record: a JSON argument
            : { [K in keyof T]: Loose<T[K]> }
          : T;

/** `Loose`, and a value the resolver may not have (a token from a cookie) may be undefined: the service refuses that. */
type Unchecked<T> = { [K in keyof Loose<T>]: Loose<T>[K] | undefined };

/**
 * Hands GraphQL input whose scalars a service's schema narrows (enums, literals, records) to the
 * service, which parses it. Checked field by field against the service's input with only those
 * narrowings widened: a renamed or mistyped field, or a required one left out, is still a compile error.
 */
export function loose<T>(input: NoInfer<Unchecked<T>>): T;
export function loose(input: unknown): unknown {
  return input;
}

/**
 * What a GraphQL input class `implements`: the service's input as GraphQL can vouch for it
 * (`Loose`), its optional fields nullable (GraphQL sends null for a field left out; the resolver
 * drops it with `omitNulls`, or the service takes null), and `never` for any field the service
 * does not take. Self is the class itself, so that a field renamed away from the service's input,
 * which zod would strip without a word, is a compile error like a missing or mistyped one.
 */
export type GqlInputOf<Self, S extends keyof Services, M extends keyof Services[S]> = GqlInput<Self, InputOf<S, M>>;

/** `GqlInputOf` for an input that is not a service method's whole input (a nested object, a part). */
export type GqlInput<Self, T> = Nullable<Loose<T>> & {
  [K in Exclude<keyof Self, keyof T>]: never;
};
