import { registerEnumType } from "type-graphql";

/**
 * A GraphQL enum over a closed set of strings the services already use: each value is its own
 * name, so a value read from a service needs no mapping. Returns the value object for
 * `@Field(() => X)`; `type X = ValueOf<typeof X>` is the union of the values.
 */
export function closedSet<const V extends string>(name: string, values: readonly V[], description?: string): { readonly [K in V]: K } {
  const set = Object.freeze(Object.fromEntries(values.map((v) => [v, v]))) as { readonly [K in V]: K };
  registerEnumType(set, { name, description });
  return set;
}

export type ValueOf<T> = T[keyof T];
