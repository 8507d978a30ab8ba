import { HeaderMap, type ApolloServer, type BaseContext } from "@apollo/server";
import type { Request, Response } from "express";

/**
 * Apollo Server as an Express 5 handler: what @as-integrations/express5 does, without its two
 * per-request costs that showed in the profile of `{ me }` (the legacy `url.parse` of every URL,
 * and an ETag hash of every response body, which no client of a POST endpoint can use).
 * Incremental delivery is streamed as the integration streams it.
 */
/**
 * The request headers Apollo itself reads (content negotiation, the POST content type, its CSRF
 * prevention's preflight headers; usage reporting, which would read client names, is off). Our
 * plugins and resolvers read the Express request, so only these are copied for each request.
 */
const APOLLO_READS = ["accept", "content-type", "x-apollo-operation-name", "apollo-require-preflight"] as const;

export function graphqlHandler<C extends BaseContext>(server: ApolloServer<C>, context: (args: { req: Request; res: Response }) => Promise<C>) {
  server.assertStarted("graphqlHandler()");
  return async (req: Request, res: Response): Promise<void> => {
    const headers = new HeaderMap();
    for (const key of APOLLO_READS) {
      const value = req.headers[key];
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(", ") : value);
    }
    const query = req.url.indexOf("?");
    const response = await server.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method.toUpperCase(), headers, search: query < 0 ? "" : req.url.slice(query), body: req.body },
      context: () => context({ req, res }),
    });
    for (const [key, value] of response.headers) res.setHeader(key, value);
    // Answers are per caller: no cache may keep them (what Apollo's cache-control plugin said).
    res.setHeader("Cache-Control", "no-store");
    res.statusCode = response.status ?? 200;
    if (response.body.kind === "complete") {
      res.setHeader("Content-Length", Buffer.byteLength(response.body.string));
      res.end(response.body.string);
      return;
    }
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
  };
}
