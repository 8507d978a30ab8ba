import { Router } from "express";
import type { Services } from "../../src/container.js";
import { sendData, sendError } from "../envelope.js";
import { mountFallbacks, mountRoutes, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

export const healthRoutes = (s: Services): RouteDef[] => [
  {
    method: "get", path: "/health", data: data.health, tag: "health", auth: "none", summary: "Liveness: the service name and version",
    handle: async (_req, res) => sendData(res, 200, "Service is healthy", s.health.health()),
  },
  {
    method: "get", path: "/ready", data: data.readiness, tag: "health", auth: "none", summary: "Readiness: the database and Redis answer",
    errors: { 503: "A dependency is unavailable (SERVICE_UNAVAILABLE; details name it)" },
    handle: async (_req, res) => {
      const result = await s.health.readiness();
      if (result.ready) sendData(res, 200, "Service is ready", result);
      else sendError(res, 503, "SERVICE_UNAVAILABLE", "A dependency is unavailable", result);
    },
  },
];

/**
 * `/api/health` and `/api/ready` (outside /api/v1, where the original API had them), with 405 for
 * their other methods. Mounted before sessions and the other routers (probes carry no credential and
 * need none of them); any other /api path falls through.
 */
export function healthRouter(s: Services): Router {
  const router = Router();
  const routes = healthRoutes(s);
  mountRoutes(router, routes);
  mountFallbacks(router, routes, { notFound: false });
  return router;
}
