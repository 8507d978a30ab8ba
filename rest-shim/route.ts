import type { NextFunction, Request, Response, Router } from "express";
import type { z } from "zod";
import { AppError } from "../src/lib/errors.js";
import { toCamel } from "../src/lib/strings.js";
import type { ApiScope } from "../src/lib/api-scopes.js";
import { requireScope } from "../src/modules/auth/guards.js";

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** One REST operation: what the router mounts and what the OpenAPI document describes. */
export interface RouteDef {
  method: Method;
  path: string;
  tag: string;
  summary: string;
  /** Who may call it (documentation; the service enforces it). */
  auth: "none" | "user" | "superadmin" | "optional";
  /** Organization-scoped routes: the lowest role that may call it (the tenancy matrix test reads this). */
  org?: "guest" | "member" | "admin" | "owner";
  /**
   * The scope a delegated caller (an OIDC access token) needs. Undeclared: delegated callers are
   * refused (INSUFFICIENT_SCOPE) whatever the route's `auth`; sessions are not affected.
   */
  scope?: ApiScope;
  body?: z.ZodType;
  query?: z.ZodType;
  status?: number;
  handle(req: Request, res: Response): Promise<void>;
}

/** Path parameter as a string (Express 5 types them loosely). */
export const param = (req: Request, name: string): string => String(req.params[name] ?? "");

/** The request body in the service's camelCase (the REST API speaks snake_case). */
export const input = (req: Request): unknown => toCamel(req.body ?? {});
export const queryInput = (req: Request): unknown => toCamel({ ...(req.query as object) });

export function mountRoutes(router: Router, routes: readonly RouteDef[]): void {
  for (const r of routes) {
    router[r.method](r.path, (req, res) => {
      // Routers without caller resolution (health) have no caller to hold to a scope.
      if (req.ctx) requireScope(req.ctx, r.scope);
      return r.handle(req, res);
    });
  }
}

/** After every route: a known path with another method is 405 (with Allow), anything else 404. */
export function mountFallbacks(router: Router, routes: readonly RouteDef[]): void {
  const byPath = new Map<string, Set<string>>();
  for (const r of routes) {
    const methods = byPath.get(r.path) ?? new Set<string>();
    methods.add(r.method.toUpperCase());
    if (r.method === "get") methods.add("HEAD");
    byPath.set(r.path, methods);
  }
  for (const [path, methods] of byPath) {
    router.all(path, (req: Request, res: Response, next: NextFunction) => {
      res.setHeader("Allow", [...methods].join(", "));
      next(new AppError("METHOD_NOT_ALLOWED", 405, `Method ${req.method} is not allowed on this path`, { allowed: [...methods] }));
    });
  }
  router.use((req: Request, _res: Response, next: NextFunction) =>
    next(new AppError("NOT_FOUND", 404, `No route for ${req.method} ${req.baseUrl}${req.path}`)),
  );
}
