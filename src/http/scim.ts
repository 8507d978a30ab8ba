import express, { Router, type NextFunction, type Request, type Response } from "express";
import type { Container } from "../container.js";
import { isAppError } from "../lib/errors.js";
import type { RequestContext } from "../lib/request-context.js";
import { findUnstorable } from "../lib/validation.js";
import { isScimError, resourceTypes, SCIM, scimBaseUrl, ScimError, schemas, serviceProviderConfig, type ListQuery, type Projection, type ScimAnswer } from "../modules/scim/index.js";
import { bodyLimitBytes, clientError, MAX_JSON_DEPTH, nestsDeeperThan } from "./body.js";
import { bearerToken, resolveRequestContext } from "./context.js";
import "./types.js";

const SCIM_JSON = "application/scim+json; charset=utf-8";

type Handler = (req: Request, res: Response) => Promise<void>;

/** The SCIM error schema (RFC 7644 §3.12). */
function sendError(res: Response, status: number, detail: string, scimType?: string): void {
  res.locals.scimError = { detail, ...(scimType ? { scimType } : {}) };
  if (status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="scim"');
  res.status(status).type(SCIM_JSON).send(JSON.stringify({ schemas: [SCIM.error], status: String(status), ...(scimType ? { scimType } : {}), detail }));
}

const send = (res: Response, status: number, body: unknown, etag?: string): void => {
  if (etag) res.setHeader("ETag", etag);
  res.status(status).type(SCIM_JSON).send(JSON.stringify(body));
};

const param = (req: Request, name: string): string => String(req.params[name] ?? "");
const ifMatch = (req: Request): string | undefined => req.get("if-match") ?? undefined;

/**
 * `/scim/v2` (issue 36): SCIM 2.0 for an organization's provisioning client. Only an organization
 * API key with the scim scope is a caller here (rule 17: a session cookie, another token or a key
 * without the scope is refused); the key decides the organization. Bodies are JSON or SCIM JSON,
 * size- and depth-limited; every error is in the SCIM error schema, never a 500 for bad input.
 */
export function createScimRouter(container: Container): Router {
  const { config, services, logger } = container;
  const base = scimBaseUrl(config.http.publicUrl);
  const router = Router();
  const limit = bodyLimitBytes(config.http.bodyLimit);
  /** SCIM activity (what admins see): once answered, what this key's request did or why it failed. */
  const recordActivity = (req: Request, res: Response, actor: { organizationId: string; keyId: string }) => {
    const { method, path } = req;
    res.once("finish", () => {
      const location = res.getHeader("Location");
      services.scimActivity
        .record({ organizationId: actor.organizationId, apiKeyId: actor.keyId, method, path, status: res.statusCode, ...(typeof location === "string" ? { location } : {}), ...(res.locals.scimError ? { error: res.locals.scimError } : {}) })
        .catch((err: unknown) => logger.warn({ err, requestId: req.requestId }, "SCIM activity not recorded"));
    });
  };

  router.use(async (req: Request, res: Response, next: NextFunction) => {
    await services.limits.consume("edge-ip", config.rateLimits.apiIp, req.ip ?? "unknown");
    // The bearer alone: a browser's session cookie is not a provisioning client.
    if (!bearerToken(req)) throw new ScimError(401, "An organization API key with the scim scope is required (Authorization: Bearer kwk_…)");
    await resolveRequestContext(services.actors, req, { acceptApiKeys: true });
    const actor = req.ctx.actor;
    if (actor.kind !== "apiKey") throw new ScimError(401, "Only an organization API key with the scim scope may call SCIM");
    recordActivity(req, res, actor);
    if (!actor.scopes.has("scim")) throw new ScimError(403, "This API key lacks the scim scope");
    await services.limits.consume("scim-key", config.rateLimits.apiIp, actor.keyId);
    next();
  });
  // The body is read once the caller is known (so a malformed one shows in the key's activity).
  router.use(express.json({ limit, type: ["application/json", "application/scim+json"], strict: true }));
  router.use((req: Request, _res: Response, next: NextFunction) => next(nestsDeeperThan(req.body, MAX_JSON_DEPTH) ? new ScimError(400, `The body is nested deeper than ${MAX_JSON_DEPTH} levels`, "invalidSyntax") : undefined));
  // What PostgreSQL cannot store (a NUL, a lone surrogate) is refused as the REST door refuses it, never a 500.
  router.use((req: Request, _res: Response, next: NextFunction) => {
    const bad = findUnstorable(req.body);
    next(bad ? new ScimError(400, `${bad.path.join(".").slice(0, 200) || "The body"}: ${bad.message}`, "invalidValue") : undefined);
  });

  const routes: Route[] = [
    ["get", "/ServiceProviderConfig", async (_req, res) => send(res, 200, serviceProviderConfig(base))],
    ["get", "/ResourceTypes", async (_req, res) => send(res, 200, listOf(resourceTypes(base)))],
    ["get", "/ResourceTypes/:id", async (req, res) => sendOne(res, resourceTypes(base).find((r) => r.id === param(req, "id")), "ResourceType")],
    ["get", "/Schemas", async (_req, res) => send(res, 200, listOf(schemas(base)))],
    ["get", "/Schemas/:id", async (req, res) => sendOne(res, schemas(base).find((s) => s.id === param(req, "id")), "Schema")],
    ...resourceRoutes("/Users", services.scimUsers),
    ...resourceRoutes("/Groups", services.scimGroups),
  ];
  const methodsByPath = new Map<string, string[]>();
  for (const [method, path, handle] of routes) {
    router[method](path, handle);
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), method.toUpperCase()]);
  }
  for (const [path, methods] of methodsByPath) {
    router.all(path, (req: Request, res: Response) => {
      res.setHeader("Allow", methods.join(", "));
      sendError(res, 405, `${req.method} is not supported on ${path}`);
    });
  }
  router.use((req: Request, res: Response) => sendError(res, 404, `No SCIM endpoint ${req.method} ${req.path.slice(0, 200)} (/Bulk and /.search are not supported)`));
  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (isScimError(err)) return sendError(res, err.status, err.detail, err.scimType);
    const known = clientError(err);
    if (known && isAppError(known)) {
      if (known.headers) for (const [k, v] of Object.entries(known.headers)) res.setHeader(k, v);
      const scimType = known.status === 400 ? "invalidSyntax" : undefined;
      return sendError(res, known.status, known.message, scimType);
    }
    logger.error({ err, requestId: req.requestId }, "SCIM request failed");
    sendError(res, 500, "The request could not be completed");
  });
  return router;
}

/** What a SCIM resource type's service answers (Users and Groups alike). */
interface ResourceService {
  list(ctx: RequestContext, q: ListQuery): Promise<Record<string, unknown>>;
  create(ctx: RequestContext, body: unknown): Promise<ScimAnswer>;
  get(ctx: RequestContext, id: string, p: Projection): Promise<ScimAnswer>;
  replace(ctx: RequestContext, id: string, body: unknown, ifMatch?: string): Promise<ScimAnswer>;
  patch(ctx: RequestContext, id: string, body: unknown, ifMatch?: string): Promise<ScimAnswer>;
  remove(ctx: RequestContext, id: string, ifMatch?: string): Promise<void>;
}

type Route = [method: "get" | "post" | "put" | "patch" | "delete", path: string, handle: Handler];

/** The six routes of one resource type (RFC 7644 §3): list, create, read, replace, patch, delete. */
function resourceRoutes(path: string, service: ResourceService): Route[] {
  return [
    ["get", path, async (req, res) => send(res, 200, await service.list(req.ctx, req.query))],
    ["post", path, async (req, res) => {
      const a = await service.create(req.ctx, req.body);
      res.setHeader("Location", String((a.resource.meta as { location: string }).location));
      send(res, 201, a.resource, a.etag);
    }],
    ["get", `${path}/:id`, async (req, res) => {
      const a = await service.get(req.ctx, param(req, "id"), req.query);
      send(res, 200, a.resource, a.etag);
    }],
    ["put", `${path}/:id`, async (req, res) => {
      const a = await service.replace(req.ctx, param(req, "id"), req.body, ifMatch(req));
      send(res, 200, a.resource, a.etag);
    }],
    ["patch", `${path}/:id`, async (req, res) => {
      const a = await service.patch(req.ctx, param(req, "id"), req.body, ifMatch(req));
      send(res, 200, a.resource, a.etag);
    }],
    ["delete", `${path}/:id`, async (req, res) => {
      await service.remove(req.ctx, param(req, "id"), ifMatch(req));
      res.status(204).end();
    }],
  ];
}

const listOf = (resources: unknown[]) => ({ schemas: [SCIM.listResponse], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources });

function sendOne(res: Response, resource: unknown, what: string): void {
  if (!resource) return sendError(res, 404, `${what} not found`);
  send(res, 200, resource);
}
