import type { NextFunction, Request, Response } from "express";
import { AppError } from "../lib/errors.js";
import type { OriginMatcher } from "../lib/origins.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF defence for cookie-authenticated writes: the browser must say the request comes from our
 * own origin (or an allowed credentialed CORS origin). Bearer requests carry no ambient cookie.
 */
export function sameOriginForCookieWrites(publicOrigin: string, corsOrigins: OriginMatcher, corsCredentials: boolean) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (SAFE_METHODS.has(req.method) || req.authVia !== "cookie") return next();
    const origin = req.get("origin");
    const fetchSite = req.get("sec-fetch-site");
    const allowed =
      (origin !== undefined && (origin === publicOrigin || (corsCredentials && corsOrigins.allows(origin)))) ||
      (origin === undefined && fetchSite === "same-origin");
    if (!allowed) {
      throw new AppError("CSRF_CHECK_FAILED", 403, "Cross-site request refused: send the request from the Keyward origin or use a bearer token");
    }
    next();
  };
}
