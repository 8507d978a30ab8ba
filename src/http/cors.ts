import type { NextFunction, Request, Response } from "express";
import type { OriginMatcher } from "../lib/origins.js";

/** One list for every cross-origin answer, preflight or not (spec: "the same in every path"). */
export const CORS_ALLOW_HEADERS = [
  "Content-Type",
  "Authorization",
  "X-Requested-With",
  "X-Request-ID",
  "Cache-Control",
  "Pragma",
  "Apollo-Require-Preflight",
  "X-Apollo-Operation-Name",
].join(", ");
const CORS_ALLOW_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS";
// WWW-Authenticate: a browser client reads where to get a token (RFC 9728 §5.1) from a 401.
const CORS_EXPOSE_HEADERS = "X-Request-ID, Retry-After, WWW-Authenticate";

/**
 * CORS per CORS_ORIGINS and CORS_SUPPORTS_CREDENTIALS. With "*" and credentials, browsers refuse a
 * literal "*", so the request's own origin is echoed (and Vary: Origin keeps caches honest).
 */
export function cors(origins: OriginMatcher, credentials: boolean) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const origin = req.get("origin");
    res.vary("Origin");
    if (origin && origins.allows(origin)) {
      const wildcardOnly = origins.any && !credentials;
      res.setHeader("Access-Control-Allow-Origin", wildcardOnly ? "*" : origin);
      if (credentials) res.setHeader("Access-Control-Allow-Credentials", "true");
      res.setHeader("Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
      res.setHeader("Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
      if (req.method === "OPTIONS" && req.get("access-control-request-method")) {
        res.setHeader("Access-Control-Allow-Methods", CORS_ALLOW_METHODS);
        res.setHeader("Access-Control-Max-Age", "3600");
        res.status(204).end();
        return;
      }
    }
    // A preflight from an origin that is not allowed gets no CORS headers: the browser stops there.
    if (req.method === "OPTIONS" && origin && req.get("access-control-request-method")) {
      res.status(204).end();
      return;
    }
    next();
  };
}
