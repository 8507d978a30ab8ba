import type { NextFunction, Request, Response } from "express";
import type { RateLimitService, RateRule } from "../../src/modules/rate-limit/index.js";

/** Coarse per-IP limit at the edge; the security limits (login, reset, …) live in the services. */
export function edgeRateLimit(limits: RateLimitService, rule: RateRule) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    await limits.consume("edge-ip", rule, req.ip ?? "unknown");
    next();
  };
}
