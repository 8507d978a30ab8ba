import { Router, type Express, type NextFunction, type Request, type Response } from "express";
import type { Container } from "../container.js";
import { AppError } from "../lib/errors.js";
import type { RateRule } from "../modules/rate-limit/index.js";
import { API_SCOPE_NAMES, apiResource } from "../lib/api-scopes.js";
import { ensureBuiltInClients } from "../modules/oidc-clients/index.js";
import { bodyLimitBytes } from "../http/body.js";
import { keepsSecureCookies } from "./cookies.js";
import { limitStreamedBodies, PROVIDER_BODY_LIMIT, refuseDeclaredOversize } from "./body-limit.js";
import { decorateProvider } from "./hooks.js";
import { interactionRouter } from "./interactions.js";
import { createKeywardSessionReader } from "./keyward-session.js";
import { buildProvider, OIDC_PREFIX } from "./provider.js";
import { asProviderError, TemporarilyUnavailable } from "./outage.js";
import { OidcRuntime } from "./runtime.js";

export { OIDC_PREFIX } from "./provider.js";
export type { OidcRuntime } from "./runtime.js";

const DISCOVERY = "/.well-known/openid-configuration";
const PROTECTED_RESOURCE = "/.well-known/oauth-protected-resource";

/** Errors of a connection the client broke or let time out, not of the service. */
const CLIENT_GONE = new Set(["ERR_HTTP_REQUEST_TIMEOUT", "ECONNRESET", "EPIPE", "ECONNABORTED", "ERR_STREAM_PREMATURE_CLOSE"]);

/** Is this request for the provider (its own CORS rules apply, not the API's)? */
export const isOidcPath = (path: string) => path === DISCOVERY || path === OIDC_PREFIX || path.startsWith(`${OIDC_PREFIX}/`);

/** Coarse per-IP limits in front of the provider's endpoints; clients get an OAuth-shaped 429. */
function edgeLimits(container: Container) {
  const { limits } = container.services;
  const rate = container.config.oidc.rate;
  const ruleFor = (path: string): [string, RateRule] | null => {
    if (path === "/token" || path === "/introspect" || path === "/revoke" || path === "/device/auth" || path === "/par" || path === "/register" || path.startsWith("/register/")) return ["oidc-token", rate.token];
    if (path === "/userinfo") return ["oidc-userinfo", rate.userinfo];
    if (path.startsWith("/authorize") || path.startsWith("/device") || path.startsWith("/interaction")) return ["oidc-authorize", rate.authorize];
    return null;
  };
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const rule = ruleFor(req.path);
    if (!rule) return next();
    try {
      await limits.consume(rule[0], rule[1], req.ip ?? "unknown");
    } catch (err) {
      // The limiter's store (Redis) down: refused, as every door refuses during an outage.
      const outage = asProviderError(err);
      if (outage instanceof TemporarilyUnavailable) {
        res.setHeader("Retry-After", String(TemporarilyUnavailable.RETRY_AFTER_SECONDS));
        res.status(503).json({ error: outage.error, error_description: outage.error_description });
        return;
      }
      if (!(err instanceof AppError) || err.status !== 429) throw err;
      const retry = (err.details as { retry_after?: number } | undefined)?.retry_after;
      if (retry) res.setHeader("Retry-After", String(retry));
      res.status(429).json({ error: "temporarily_unavailable", error_description: "Too many requests; retry later" });
      return;
    }
    next();
  };
}

/**
 * Mounts the OpenID Connect provider: discovery at the root, everything else under /api/v1/oidc.
 * No body parser may run before the provider (it reads the raw request itself).
 */
export async function mountOidc(app: Express, container: Container): Promise<OidcRuntime> {
  const { config, services, db, clock, logger } = container;
  const keywardUser = createKeywardSessionReader(services.actors);
  await ensureBuiltInClients(db, clock);
  if (!keepsSecureCookies(config.http.publicUrl)) {
    logger.warn(`PUBLIC_URL ${config.http.publicUrl} is plain http on a name that is not loopback: browsers keep no Secure cookie from it, so the OpenID provider's authorization and logout endpoints take GET only (use https, or localhost)`);
  }
  // BODY_LIMIT here too, within what the provider reads at all: beyond it, 413 (body-limit.ts).
  const bodyLimit = Math.min(bodyLimitBytes(config.http.bodyLimit), PROVIDER_BODY_LIMIT);
  const runtime = new OidcRuntime(services.oidcKeys, (keys) => {
    const provider = buildProvider({ config, db, clock, box: container.box, clients: services.oidcClients, identity: services.oidcIdentity, registration: services.oidcRegistration, keywardUser }, keys);
    decorateProvider(provider, { config, db, logger, audit: services.audit, identity: services.oidcIdentity, login: services.login, keywardUser });
    provider.use(limitStreamedBodies(bodyLimit));
    // Koa reports a connection that broke under a request on "error" (and prints it to stderr when
    // nobody listens): a client gone, or cut by a read timeout (408). The client's doing, so debug.
    (provider as unknown as NodeJS.EventEmitter).on("error", (err: NodeJS.ErrnoException) => {
      if (CLIENT_GONE.has(err.code ?? "")) logger.debug({ err }, "oidc request ended by the client's connection");
      else logger.error({ err }, "oidc provider error");
    });
    return provider;
  });
  await runtime.start();

  // Registered on the application itself; oidc-provider derives its URLs from originalUrl.
  app.get(DISCOVERY, (req, res) => {
    req.url = DISCOVERY;
    req.originalUrl = `${OIDC_PREFIX}${DISCOVERY}`;
    res.setHeader("Cache-Control", "public, max-age=86400");
    void runtime.handle(req, res);
  });

  // RFC 9728: how a client learns the API's resource indicator and scopes (the CLI reads it, and
  // every 401 of the API doors names it). The document of a resource lives at the well-known path
  // followed by the resource's own path (§3.1) and names that resource (§3.3), so the API's is at
  // /.well-known/oauth-protected-resource/api/v1. There is no root document: it would describe the
  // origin as a resource, and the origin is not one (no token is issued for it).
  const resource = apiResource(config.http.publicUrl);
  const resourceMetadata = { resource, authorization_servers: [config.oidc.issuer], scopes_supported: API_SCOPE_NAMES, bearer_methods_supported: ["header"] };
  app.get(`${PROTECTED_RESOURCE}${new URL(resource).pathname}`, (_req, res) => {
    res.setHeader("Cache-Control", "public, max-age=3600");
    res.json(resourceMetadata);
  });

  const router = Router();
  router.use(edgeLimits(container));
  router.use(refuseDeclaredOversize(bodyLimit));
  router.use(interactionRouter({ runtime, identity: services.oidcIdentity, keywardUser, brand: config.email.brand.name, publicOrigin: config.http.publicUrl, clock, kv: container.kv }));
  router.use((req, res) => void runtime.handle(req, res));
  app.use(OIDC_PREFIX, router);
  return runtime;
}
