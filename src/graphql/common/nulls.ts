/**
 * T as GraphQL hands it over: an optional field may be null. `omitNulls` takes an object as the
 * input it is passed on as (a service's), typed from where it goes rather than from what it is
 * given: a field the service does not take is an excess property, a compile error.
 */
export type Nullable<T> = { [K in keyof T]: undefined extends T[K] ? T[K] | null : T[K] };

/**
 * The one null-to-undefined mapping between GraphQL and the services. GraphQL hands a nullable
 * argument or input field the client left out (or sent as null) to the resolver as null; to a
 * service "not given" is an absent key, so its zod defaults and `??` fallbacks apply. Shallow: a
 * JSON argument's inner nulls are the client's data.
 *
 * Not for inputs where null means something: update inputs where `description: null` clears the
 * field, and inputs whose service refuses null (VALIDATION_ERROR, as REST answers a JSON null) go to
 * the service as they are.
 */
export function omitNulls<T extends string | number | boolean>(value: T | null | undefined): T | undefined;
export function omitNulls<T extends object>(input: NoInfer<Nullable<T>>): T;
export function omitNulls(value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined));
}
