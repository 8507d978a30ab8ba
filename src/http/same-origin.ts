import type { NextFunction, Request, Response } from "express";
import { AppError } from "../lib/errors.js";
import type { OriginMatcher } from "../lib/origins.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF defence for browser writes. Cookie-authenticated writes must say they come from our own
 * origin (or an allowed credentialed CORS origin). Anonymous writes from a browser on a foreign
 * site are refused too: sign-in, registration and invitation acceptance set the session cookie,
 * and a foreign page must not sign the visitor in to an account of its choosing (login CSRF).
 * Bearer requests carry no ambient cookie; clients that are not browsers send neither header.
 */
export function sameOriginForCookieWrites(publicOrigin: string, corsOrigins: OriginMatcher, corsCredentials: boolean) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (SAFE_METHODS.has(req.method) || req.authVia === "bearer") return next();
    const origin = req.get("origin");
    const fetchSite = req.get("sec-fetch-site");
    if (req.authVia === "cookie") {
      const allowed =
        (origin !== undefined && (origin === publicOrigin || (corsCredentials && corsOrigins.allows(origin)))) ||
        (origin === undefined && fetchSite === "same-origin");
      if (!allowed) throw refused();
      return next();
    }
    // Anonymous: a browser that names a foreign origin, or says the request is cross-site.
    const foreignOrigin = origin !== undefined && origin !== publicOrigin && !corsOrigins.allows(origin);
    const crossSite = origin === undefined && fetchSite === "cross-site";
    if (foreignOrigin || crossSite) throw refused();
    next();
  };
}

const refused = () =>
  new AppError("CSRF_CHECK_FAILED", 403, "Cross-site request refused: send the request from the Keyward origin or use a bearer token");
