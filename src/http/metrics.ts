import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Express, NextFunction, Request, Response } from "express";
import type { Metrics } from "../infra/metrics.js";
import { safeEqual, sha256Hex } from "../lib/crypto/index.js";
import { AppError } from "../lib/errors.js";
import { OIDC_PREFIX, ROUTES as OIDC_ENDPOINTS } from "./oidc-paths.js";
import { createHttpServer, type HttpTimeouts } from "./http-server.js";

/**
 * HTTP request metrics and the `/metrics` endpoint.
 *
 * Routes are labelled by their Express template (`/api/v1/organizations/:orgId`), never by the URL.
 * Express resets `req.baseUrl` when an error leaves a router, so the mount path is captured at the
 * moment the router assigns `req.route` (an accessor on the app's request prototype, installed
 * once). A steady-state request allocates nothing here but the label object handed to observe().
 */

const START = Symbol("keyward.metrics.start");
const ROUTE = Symbol("keyward.metrics.route");
const ROUTE_BASE = Symbol("keyward.metrics.routeBase");

interface RouteLike {
  path?: unknown;
}
type Timed = IncomingMessage & { [START]?: number; [ROUTE]?: RouteLike; [ROUTE_BASE]?: string; originalUrl?: string; method?: string };

/** The label for requests no route matched (404s, probes of random paths). */
export const UNMATCHED_ROUTE = "unmatched";

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const STATUS_CLASSES = ["0xx", "1xx", "2xx", "3xx", "4xx", "5xx"];
// Longest first, so /device/auth wins over /device.
const OIDC_PATHS = Object.values(OIDC_ENDPOINTS).map((p) => `${OIDC_PREFIX}${p}`).sort((a, b) => b.length - a.length);

/** Is `url` exactly `path`, or `path` followed by a query or a deeper segment? */
const under = (url: string, path: string) => url.startsWith(path) && (url.length === path.length || url[path.length] === "/" || url[path.length] === "?");

/** Mount paths without routes: Apollo under /graphql and oidc-provider's own endpoints. */
function unroutedLabel(url: string): string {
  if (under(url, "/graphql")) return "/graphql";
  if (under(url, OIDC_PREFIX)) {
    for (const path of OIDC_PATHS) if (under(url, path)) return path;
    return `${OIDC_PREFIX}/*`;
  }
  return UNMATCHED_ROUTE;
}

/** When the instrumented request started (performance.now()), for timings finer than the request's. */
export const requestStartedAt = (req: IncomingMessage): number | undefined => (req as Timed)[START];

/** Instruments an Express app: times every request and labels it by route template. */
export function instrumentApp(app: Express, metrics: Metrics): void {
  // Route -> template, per mount path; filled on first use, so later requests allocate nothing.
  const templates = new WeakMap<object, { base: string; label: string }>();

  const routeLabel = (req: Timed): string => {
    const route = req[ROUTE];
    if (!route || typeof route.path !== "string") return unroutedLabel(req.originalUrl ?? req.url ?? "");
    const base = req[ROUTE_BASE] ?? "";
    const cached = templates.get(route);
    if (cached && cached.base === base) return cached.label;
    const label = base === "" ? route.path : route.path === "/" ? base : base + route.path;
    templates.set(route, { base, label });
    return label;
  };

  function onFinish(this: ServerResponse): void {
    const req = this.req as Timed;
    const start = req[START];
    if (start === undefined) return;
    const method = req.method && METHODS.has(req.method) ? req.method : "OTHER";
    const statusClass = STATUS_CLASSES[Math.floor(this.statusCode / 100)] ?? "other";
    metrics.http.observe({ method, route: routeLabel(req), status_class: statusClass }, (performance.now() - start) / 1000);
  }

  // The router assigns req.route when a route matches, while req.baseUrl is still the mount path.
  Object.defineProperty(app.request, "route", {
    configurable: true,
    enumerable: true,
    get(this: Timed) {
      return this[ROUTE];
    },
    set(this: Timed & { baseUrl?: string }, route: RouteLike) {
      this[ROUTE] = route;
      this[ROUTE_BASE] = this.baseUrl;
    },
  });

  app.use((req: Request, res: Response, next: NextFunction) => {
    (req as unknown as Timed)[START] = performance.now();
    res.on("finish", onFinish);
    next();
  });
}

/** Constant-time check of `Authorization: Bearer <token>` (hashes first, so lengths do not leak). */
function bearerMatches(header: string | undefined, expectedHash: string): boolean {
  const presented = header?.startsWith("Bearer ") ? header.slice(7).trim() : "";
  return safeEqual(sha256Hex(presented), expectedHash);
}

const refused = (code: "AUTH_REQUIRED" | "INVALID_TOKEN", message: string) => new AppError(code, 401, message, undefined, { "WWW-Authenticate": 'Bearer realm="metrics"' });

/**
 * `GET /metrics` on the main port: only with the bearer token; refusals use the REST envelope.
 * Without a token the route is not mounted (404 like any unknown path).
 */
export function mountMetricsEndpoint(app: Express, metrics: Metrics, token: string | undefined): void {
  if (!token) return;
  const expected = sha256Hex(token);
  app.get("/metrics", async (req: Request, res: Response, next: NextFunction) => {
    const header = req.get("authorization");
    if (!header) return next(refused("AUTH_REQUIRED", "Metrics need Authorization: Bearer <METRICS_TOKEN>"));
    if (!bearerMatches(header, expected)) return next(refused("INVALID_TOKEN", "Invalid metrics token"));
    const { contentType, body } = await metrics.scrape();
    res.setHeader("Cache-Control", "no-store");
    res.type(contentType).send(body);
  });
}

/**
 * The separate metrics listener (METRICS_PORT; the caller listens): `/metrics` only, no sessions or API, so it can sit
 * on an address only Prometheus reaches. With METRICS_TOKEN set it asks for the token as well. The same read
 * timeouts as the main port.
 */
export function createMetricsServer(metrics: Metrics, options: { token?: string; timeouts: HttpTimeouts }): Server {
  const expected = options.token ? sha256Hex(options.token) : null;
  const server = createHttpServer(options.timeouts, (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    const answer = (status: number, text: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
      res.end(text);
    };
    if (path !== "/metrics") return answer(404, "Not found\n");
    if (req.method !== "GET" && req.method !== "HEAD") return answer(405, "Method not allowed\n", { allow: "GET, HEAD" });
    if (expected && !bearerMatches(req.headers.authorization, expected)) return answer(401, "Unauthorized\n", { "www-authenticate": 'Bearer realm="metrics"' });
    metrics.scrape().then(
      ({ contentType, body }) => {
        res.writeHead(200, { "content-type": contentType, "cache-control": "no-store" });
        res.end(req.method === "HEAD" ? undefined : body);
      },
      () => answer(500, "Metrics collection failed\n"),
    );
  });
  return server;
}
