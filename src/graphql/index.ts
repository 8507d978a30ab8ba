import { ApolloServer } from "@apollo/server";
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from "@apollo/server/plugin/disabled";
import { Router, type NextFunction, type Request, type Response } from "express";
import { GraphQLError } from "graphql";
import type { Container } from "../container.js";
import { clientError, jsonBody, MAX_JSON_DEPTH } from "../http/body.js";
import { resolveRequestContext } from "../http/context.js";
import { bearerChallenge, protectedResourceMetadataUrl } from "../http/bearer-challenge.js";
import { AppError, isAppError } from "../lib/errors.js";
import type { GqlContext } from "./context.js";
import { graphqlHandler } from "./express-handler.js";
import { appErrorExtensions, createFormatError } from "./format-error.js";
import { limitsPlugin, maxValueDepthRule } from "./limits.plugin.js";
import { metricsPlugin } from "./metrics.plugin.js";
import { outagePlugin } from "./outage.plugin.js";
import { buildGraphqlSchema } from "./schema.js";
import { scopePlugin } from "./scope.js";

// The IDE page inlines all of its assets (no CDN); its scripts and styles are inline too. The
// renderer holds them as one ~9 MB string: loaded with the first page asked for, not by every instance.
let ide: Promise<string> | undefined;
const idePage = () => (ide ??= import("@graphql-yoga/render-graphiql").then((m) => m.renderGraphiQL({ endpoint: "/graphql", title: "Keyward GraphQL" })));

const IDE_CSP = "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'";

/** `/graphql`: Apollo Server over the same services as REST, plus a self-hosted GraphiQL. */
export async function createGraphqlRouter(container: Container): Promise<{ router: Router; stop: () => Promise<void> }> {
  const { services, config, logger } = container;
  const schema = await buildGraphqlSchema(services);
  // The challenge of a refused caller names the API's protected resource document (bearer-challenge.ts).
  const resourceMetadata = protectedResourceMetadataUrl(config.http.publicUrl);
  const ideAllowed = (ctx: GqlContext["ctx"]) =>
    config.graphql.ideForEveryone || (ctx.actor.kind === "user" && ctx.actor.isSuperadmin);

  const apollo = new ApolloServer<GqlContext>({
    schema,
    csrfPrevention: true,
    // src/serve.ts owns graceful shutdown; Apollo's own signal handlers would race it.
    stopOnTerminationSignals: false,
    introspection: true, // gated per caller by the limits plugin
    formatError: createFormatError(logger, { hideSuggestions: config.isProduction }),
    validationRules: [maxValueDepthRule(MAX_JSON_DEPTH)],
    includeStacktraceInErrorResponses: false,
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      // Nothing here is cacheable: the handler answers "Cache-Control: no-store" itself, which is
      // what this plugin computed after a hook on every resolved field.
      ApolloServerPluginCacheControlDisabled(),
      // Never report operations or the schema to Apollo's cloud, whatever APOLLO_KEY says.
      ApolloServerPluginUsageReportingDisabled(),
      ApolloServerPluginSchemaReportingDisabled(),
      // Traces for a federation gateway: Keyward is no subgraph. Left to itself Apollo installs the
      // plugin anyway, and it is one more hook call (and promise) on every request.
      ApolloServerPluginInlineTraceDisabled(),
      scopePlugin(() => schema, resourceMetadata),
      outagePlugin(),
      limitsPlugin({
        schema: () => schema,
        maxDepth: config.graphql.maxDepth,
        maxComplexity: config.graphql.maxComplexity,
        introspectionAllowed: (c) => ideAllowed(c.ctx),
      }),
      ...(container.metrics ? [metricsPlugin(container.metrics)] : []),
    ],
  });
  await apollo.start();

  const router = Router();
  router.get("/", async (req: Request, res: Response, next) => {
    if (!req.accepts("html") || req.get("accept")?.includes("application/json")) return next();
    await resolveRequestContext(services.actors, req).catch(() => undefined);
    if (!req.ctx || !ideAllowed(req.ctx)) return next();
    res.setHeader("Content-Security-Policy", IDE_CSP);
    res.type("html").send(await idePage());
  });
  router.use(
    jsonBody(config.http.bodyLimit),
    graphqlHandler(apollo, async ({ req, res }) => {
      try {
        await resolveRequestContext(services.actors, req, { acceptDelegated: true, acceptApiKeys: true });
        // Organization API keys are for the REST routes that declare them; no GraphQL operation does.
        if (req.ctx.actor.kind === "apiKey") {
          throw new AppError("INSUFFICIENT_SCOPE", 403, "Organization API keys cannot use GraphQL: use the REST routes that accept them", { required_scope: null });
        }
      } catch (e) {
        // A refused caller, or the session store or database down (503 with Retry-After, as REST).
        const known = isAppError(e) ? e : clientError(e);
        if (!known) throw e;
        for (const [k, v] of Object.entries(known.headers ?? {})) res.setHeader(k, v);
        const challenge = bearerChallenge(known, resourceMetadata);
        if (challenge) res.setHeader("WWW-Authenticate", challenge);
        throw new GraphQLError(known.message, { extensions: { code: known.code, http: { status: known.status } } });
      }
      return { ctx: req.ctx, sessionToken: req.sessionToken, req, res, config };
    }),
  );
  // Failures before Apollo (bad JSON or gzip, too deep, too large) still answer as GraphQL does.
  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const known = clientError(err);
    if (!known) logger.error({ err, requestId: req.requestId }, "unhandled error");
    const extensions = known ? appErrorExtensions(known) : { code: "INTERNAL_ERROR", status: 500 };
    for (const [k, v] of Object.entries(known?.headers ?? {})) res.setHeader(k, v);
    res.status(extensions.status).json({ errors: [{ message: known?.message ?? "An unexpected error occurred", extensions }] });
  });
  return { router, stop: () => apollo.stop() };
}
