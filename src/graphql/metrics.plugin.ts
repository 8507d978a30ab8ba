import type { ApolloServerPlugin, GraphQLRequestListener } from "@apollo/server";
import { Kind, type OperationDefinitionNode } from "graphql";
import { requestStartedAt } from "../http/metrics.js";
import type { Metrics } from "../infra/metrics.js";
import type { GqlContext } from "./context.js";

/**
 * The root field an operation selects: a schema name (bounded), unlike the client-chosen operation
 * name. Several root fields read "multiple"; only __typename reads "__typename".
 */
function rootField(op: OperationDefinitionNode): string {
  let name: string | undefined;
  for (const sel of op.selectionSet.selections) {
    if (sel.kind !== Kind.FIELD) return "multiple";
    if (sel.name.value === "__typename") continue;
    if (name !== undefined) return "multiple";
    name = sel.name.value;
  }
  return name ?? "__typename";
}

/**
 * GraphQL operations by type, root field and outcome (success, error, or invalid: the document did
 * not parse or validate). Duration runs from the HTTP request's start. One listener object serves
 * every request, so the plugin allocates nothing per request beyond the label object.
 */
export function metricsPlugin(metrics: Metrics): ApolloServerPlugin<GqlContext> {
  const listener: GraphQLRequestListener<GqlContext> = {
    async willSendResponse(rc) {
      const op = rc.operation;
      const outcome = !op ? "invalid" : rc.errors?.length ? "error" : "success";
      const started = requestStartedAt(rc.contextValue.req) ?? performance.now();
      metrics.graphql.observe(
        { type: op?.operation ?? "unknown", operation: op ? rootField(op) : "unknown", outcome },
        (performance.now() - started) / 1000,
      );
    },
  };
  return {
    async requestDidStart() {
      return listener;
    },
  };
}
