import express, { type Express } from "express";
import { createRestShim } from "../rest-shim/index.js";
import { errorHandler } from "../rest-shim/middleware/error-handler.js";
import { healthRouter } from "../rest-shim/routes/health.routes.js";
import type { Container } from "./container.js";
import { createGraphqlRouter } from "./graphql/index.js";
import { createPagesRouter } from "./pages/pages.js";
import { outagePage } from "./pages/outage-page.js";
import { AppError } from "./lib/errors.js";
import { protectedResourceMetadataUrl } from "./http/bearer-challenge.js";
import { cors } from "./http/cors.js";
import { instrumentApp, mountMetricsEndpoint } from "./http/metrics.js";
import { requestId } from "./http/request-id.js";
import { requestLog } from "./http/request-log.js";
import { createScimRouter } from "./http/scim.js";
import { securityHeaders } from "./http/security-headers.js";
import { sessionMiddleware } from "./http/session.js";
import { isOidcPath, mountOidc, type OidcRuntime } from "./oidc/index.js";
import "./http/types.js";

/**
 * The Express application. Order matters: request id and logging first, then security headers
 * and CORS, then sessions; the OIDC provider sits before any body parser (it reads requests itself)
 * and answers CORS for its endpoints per registered client.
 */
export async function createApp(container: Container): Promise<{ app: Express; oidc: OidcRuntime; stop: () => Promise<void> }> {
  const { config, logger, services, corsOrigins } = container;
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", config.http.trustProxy);
  app.set("query parser", "simple");

  if (container.metrics) instrumentApp(app, container.metrics);
  app.use(requestId);
  app.use(requestLog(logger));
  app.use(
    securityHeaders({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      strictTransportSecurity: config.http.https ? { maxAge: 31536000, includeSubDomains: true } : false,
      crossOriginResourcePolicy: { policy: "same-site" },
    }),
  );
  if (container.metrics) mountMetricsEndpoint(app, container.metrics, config.metrics.token);
  const apiCors = cors(corsOrigins, config.cors.credentials);
  app.use((req, res, next) => (isOidcPath(req.path) ? next() : apiCors(req, res, next)));
  // Probes first: they need no session and none of the routers below.
  app.use("/api", healthRouter(services));
  app.use(sessionMiddleware(config, container.sessionStore));
  const oidc = await mountOidc(app, container);

  const graphql = await createGraphqlRouter(container);
  app.use("/graphql", graphql.router);
  // SCIM 2.0 provisioning (issue 36): organization API keys with the scim scope only.
  app.use("/scim/v2", createScimRouter(container));
  app.use(createPagesRouter(container));
  app.use("/api/v1", createRestShim(container));
  app.use((req, _res, next) => next(new AppError("NOT_FOUND", 404, `No route for ${req.method} ${req.path}`)));
  app.use(outagePage(config.email.brand.name));
  app.use(errorHandler(logger, { resourceMetadata: protectedResourceMetadataUrl(config.http.publicUrl) }));
  return { app, oidc, stop: graphql.stop };
}
