import { Router } from "express";
import type { Config } from "../src/config/index.js";
import type { Container, Services } from "../src/container.js";
import { buildOpenApi, type OpenApiDocument } from "./openapi.js";
import { healthRoutes } from "./routes/health.routes.js";
import { jsonBody } from "../src/http/body.js";
import { AppError } from "../src/lib/errors.js";
import { contextMiddleware } from "../src/http/context.js";
import { sameOriginForCookieWrites } from "../src/http/same-origin.js";
import { edgeRateLimit } from "./middleware/rate-limit.js";
import { mountFallbacks, mountRoutes, type RouteDef } from "./route.js";
import { networksRoutes } from "./routes/networks.routes.js";
import { accessRequestsRoutes } from "./routes/access-requests.routes.js";
import { adminRoutes } from "./routes/admin.routes.js";
import { operatorsRoutes } from "./routes/operators.routes.js";
import { auditRoutes } from "./routes/audit.routes.js";
import { apiKeysRoutes } from "./routes/api-keys.routes.js";
import { domainsRoutes } from "./routes/domains.routes.js";
import { ssoRoutes } from "./routes/sso.routes.js";
import { scimRoutes } from "./routes/scim.routes.js";
import { directoryRoutes } from "./routes/directory.routes.js";
import { orgsRoutes } from "./routes/orgs.routes.js";
import { offboardingRoutes } from "./routes/offboarding.routes.js";
import { sshRoutes } from "./routes/ssh.routes.js";
import { sshHostsRoutes } from "./routes/ssh-hosts.routes.js";
import { contactRoutes } from "./routes/contact.routes.js";
import { emailRoutes } from "./routes/email.routes.js";
import { externalAuthRoutes } from "./routes/external-auth.routes.js";
import { mfaRoutes } from "./routes/mfa.routes.js";
import { authRoutes } from "./routes/auth.routes.js";
import { usersRoutes } from "./routes/users.routes.js";
import { oidcClientsRoutes } from "./routes/oidc-clients.routes.js";
import "../src/http/types.js";

/** Every REST operation, in one list: mounted below and described by the OpenAPI document. */
export function restRoutes(services: Services, config: Config): RouteDef[] {
  return [
    ...authRoutes(services, config),
    ...mfaRoutes(services, config),
    ...externalAuthRoutes(services, config),
    ...usersRoutes(services),
    ...orgsRoutes(services, config),
    ...offboardingRoutes(services),
    ...directoryRoutes(services),
    ...apiKeysRoutes(services),
    ...domainsRoutes(services),
    ...ssoRoutes(services, config),
    ...scimRoutes(services),
    ...oidcClientsRoutes(services),
    ...sshRoutes(services),
    ...sshHostsRoutes(services),
    ...contactRoutes(services),
    ...emailRoutes(services),
    ...adminRoutes(services),
    ...operatorsRoutes(services),
    ...auditRoutes(services),
    ...networksRoutes(services),
    ...accessRequestsRoutes(services),
  ];
}

/** The OpenAPI document (also committed as openapi.json and served at /api/v1/openapi.json). */
export function openApiDocument(services: Services, config: Config, version: string) {
  return documentOf(restRoutes(services, config), services, version);
}

/** The document of a route table already built (the shim's own, mounted at start). */
function documentOf(routes: RouteDef[], services: Services, version: string) {
  return buildOpenApi([...routes, ...healthRoutes(services)], { version });
}

/** The `/api/v1` router: JSON bodies, caller resolution, CSRF check for cookie writes, routes, 404/405. */
export function createRestShim(container: Container): Router {
  const { config, services, corsOrigins } = container;
  const routes = restRoutes(services, config);
  // Built for the first request that asks for it: most instances never serve it, and it is 1.5 MB
  // of JSON held in the heap and a tenth of a second of start-up (issue 38).
  let document: OpenApiDocument | undefined;
  const router = Router();
  router.get("/openapi.json", (_req, res) => void res.json((document ??= documentOf(routes, services, container.version))));
  // A documented path: another method is 405 with Allow, as on every route of the table.
  router.all("/openapi.json", (req, res, next) => {
    res.setHeader("Allow", "GET, HEAD");
    next(new AppError("METHOD_NOT_ALLOWED", 405, `Method ${req.method} is not allowed on this path`, { allowed: ["GET", "HEAD"] }));
  });
  router.use(jsonBody(config.http.bodyLimit));
  router.use(edgeRateLimit(services.limits, config.rateLimits.apiIp));
  router.use(contextMiddleware(services.actors));
  router.use(sameOriginForCookieWrites(config.http.publicUrl, corsOrigins, config.cors.credentials));
  mountRoutes(router, routes);
  mountFallbacks(router, routes);
  return router;
}
