import { z } from "zod";

/** True when A and B have the same keys and each is assignable to the other. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? ([keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false) : false) : false;

/** Compiles only when the zod schema's output type and the view type agree (see `Same`). */
export function sameShape<A, B>(..._proof: Same<A, B> extends true ? [] : [{ drift: "the zod view schema differs from the service's view type"; zod: A; view: B }]): void {}

/** What a service method resolves to, and the element of a list or page. */
export type Returns<F> = F extends (...args: never[]) => infer R ? Awaited<R> : never;
export type Item<T> = T extends ReadonlyArray<infer I> ? I : T extends { items: ReadonlyArray<infer I> } ? I : never;

/** Named views: the OpenAPI document lists them once under components.schemas and refers to them. */
export const viewRegistry = z.registry<{ id: string }>();
export const named = <T extends z.ZodType>(id: string, schema: T): T => {
  viewRegistry.add(schema, { id });
  return schema;
};

/** Dates are Dates in the views and ISO strings on the wire (the document generator maps them). */
export const date = z.date();
export const orgRole = z.enum(["owner", "admin", "member", "guest"]);
/** `{ <key>: [...], count }`, the list shape of the REST API. */
export const list = <K extends string, T extends z.ZodType>(key: K, item: T) => z.object({ [key]: z.array(item), count: z.number().int() } as { [P in K]: z.ZodArray<T> } & { count: z.ZodNumber });
/** A list with `page`, `per_page` and `pages`. */
export const paged = <K extends string, T extends z.ZodType>(key: K, item: T) =>
  z.object({ [key]: z.array(item), count: z.number().int(), page: z.number().int(), perPage: z.number().int(), pages: z.number().int() } as { [P in K]: z.ZodArray<T> } & {
    count: z.ZodNumber;
    page: z.ZodNumber;
    perPage: z.ZodNumber;
    pages: z.ZodNumber;
  });

