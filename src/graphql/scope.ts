import type { ApolloServerPlugin } from "@apollo/server";
import { GraphQLError, Kind, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode } from "graphql";
import { Extensions } from "type-graphql";
import type { ApiScope } from "../lib/api-scopes.js";
import { bearerChallenge } from "../http/bearer-challenge.js";
import { isAppError } from "../lib/errors.js";
import type { GqlContext } from "./context.js";
import { requireScope } from "../modules/access/index.js";

/**
 * Marks an operation a delegated caller (an OIDC access token) may use, with the scope it needs
 * (the same scope as its REST twin). Operations without it refuse delegated callers.
 */
export const scope = (name: ApiScope) => Extensions({ scope: name });

/** The operation's top-level fields, through fragments (each root field is one service call). */
function rootFields(operation: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>): string[] {
  const names: string[] = [];
  const seen = new Set<string>();
  const visit = (set: SelectionSetNode) => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) names.push(sel.name.value);
      else if (sel.kind === Kind.INLINE_FRAGMENT) visit(sel.selectionSet);
      else if (!seen.has(sel.name.value)) {
        seen.add(sel.name.value);
        const fragment = fragments.get(sel.name.value);
        if (fragment) visit(fragment.selectionSet);
      }
    }
  };
  visit(operation.selectionSet);
  return names;
}

/**
 * Holds delegated callers to their scopes, once per request before anything runs: every root field
 * must declare a scope the token carries. Sessions are not affected. A refusal is HTTP 403 with the
 * `insufficient_scope` challenge naming the scope and `resourceMetadata` (RFC 6750 §3.1).
 */
export function scopePlugin(schema: () => GraphQLSchema, resourceMetadata: string): ApolloServerPlugin<GqlContext> {
  return {
    async requestDidStart({ contextValue }) {
      if (contextValue.ctx.actor.kind !== "user" || !contextValue.ctx.actor.delegation) return;
      return {
        async didResolveOperation({ document, operation }) {
          if (!operation) return;
          const root = operation.operation === "mutation" ? schema().getMutationType() : operation.operation === "query" ? schema().getQueryType() : null;
          const fields = root?.getFields() ?? {};
          const fragments = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
          for (const name of rootFields(operation, fragments)) {
            if (name === "__typename") continue;
            try {
              requireScope(contextValue.ctx, fields[name]?.extensions?.scope as ApiScope | undefined);
            } catch (err) {
              if (!isAppError(err)) throw err;
              const challenge = bearerChallenge(err, resourceMetadata);
              if (challenge) contextValue.res.setHeader("WWW-Authenticate", challenge);
              throw new GraphQLError(err.message, { originalError: err, extensions: { code: err.code, http: { status: err.status } } });
            }
          }
        },
      };
    },
  };
}
