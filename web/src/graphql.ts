import { initGraphQLTada } from "gql.tada";
import type { introspection } from "./graphql-env.d.ts";

/**
 * Every GraphQL document of the app is written with this tag and typed from schema.graphql
 * (graphql-env.d.ts is generated from it by `gql.tada generate output`); `npm run typecheck` runs
 * `gql.tada check`, so a field the schema lacks fails the build.
 */
export const graphql = initGraphQLTada<{
  introspection: introspection;
  scalars: { DateTimeISO: string; JSON: unknown; JSONObject: Record<string, unknown> };
}>();

export type { FragmentOf, ResultOf, VariablesOf } from "gql.tada";
export { readFragment } from "gql.tada";
