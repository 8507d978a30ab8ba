import type { Services } from "../../container.js";

type Answer<S extends keyof Services, M extends keyof Services[S]> = Services[S][M] extends (...args: never[]) => infer R ? Awaited<R> : never;

/**
 * What a service method answers (one element of it, when it answers a list). A GraphQL object type
 * `implements` it, or the named view its module exports, so a field that drifts from what the
 * service, and REST with it, serves is a compile error rather than a null at run time.
 */
export type ViewOf<S extends keyof Services, M extends keyof Services[S]> = Answer<S, M> extends readonly (infer E)[] ? E : Answer<S, M>;
