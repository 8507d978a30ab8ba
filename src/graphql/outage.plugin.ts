import type { ApolloServerPlugin, GraphQLRequestListener } from "@apollo/server";
import { unwrapResolverError } from "@apollo/server/errors";
import { clientError } from "../http/body.js";
import type { GqlContext } from "./context.js";

/**
 * An operation that met PostgreSQL or Redis down (or a transaction rolled back for a concurrent
 * change) answers HTTP 503 with Retry-After, as REST does, besides `extensions.code`
 * SERVICE_UNAVAILABLE: a client, a proxy or a load balancer that reads only the status knows to
 * retry, and none counts it as a success. Other errors keep GraphQL's 200.
 */
export function outagePlugin(): ApolloServerPlugin<GqlContext> {
  const listener: GraphQLRequestListener<GqlContext> = {
    async willSendResponse({ errors, response }) {
      if (!errors?.length) return;
      let retryAfter: number | undefined;
      for (const error of errors) {
        const known = clientError(unwrapResolverError(error.originalError ?? error));
        if (known?.code !== "SERVICE_UNAVAILABLE") continue;
        const seconds = Number(known.headers?.["Retry-After"] ?? 5);
        retryAfter = Math.max(retryAfter ?? 0, seconds);
      }
      if (retryAfter === undefined) return;
      response.http.status = 503;
      response.http.headers.set("retry-after", String(retryAfter));
    },
  };
  return { requestDidStart: async () => listener };
}
