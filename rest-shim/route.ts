import type { NextFunction, Request, Response, Router } from "express";
import type { z } from "zod";
import { AppError } from "../src/lib/errors.js";
import { toCamel } from "../src/lib/strings.js";
import type { ApiKeyScope } from "../src/lib/api-key-scopes.js";
import type { ApiScope } from "../src/lib/api-scopes.js";
import { requireApiKeyScope, requireScope } from "../src/modules/access/index.js";

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
  /**
   * The route takes an organization API key (`Authorization: Bearer kwk_…`) holding this scope.
   * Undeclared: keys are refused (INSUFFICIENT_SCOPE) whatever the route's `auth`; the service
   * still holds the key to its own organization and scopes.
   */
  apiKey?: ApiKeyScope;
  /** The JSON body (the service's input schema, camelCase; REST clients send snake_case). */
  body?: z.ZodType;
  query?: z.ZodType;
  /** The success status (200 unless said). */
  status?: number;
  /** Other success statuses with the same body (a create-or-update: 201 when new, 200 when updated). */
  alsoStatus?: number[];
  /** The `data` of the success envelope: a zod schema of the view the service returns; null: the answer has none (undeclared: any object). */
  data?: z.ZodType | null;
  /** The route answers with a redirect (Location); `only`: it never answers JSON. */
  redirect?: { status: 302 | 303; description: string; only?: boolean };
  /** A success body that is not the JSON envelope, by media type (the binary KRL; an export's formats). */
  produces?: string | string[];
  /**
   * Error statuses the service answers beyond those the declaration implies (auth → 401/403, org →
   * 403/404, path parameters → 404, body/query → 400, the edge limit → 429), each with when.
   */
  errors?: Partial<Record<number, string>>;
  handle(req: Request, res: Response): Promise<void>;
}

/** Path parameter as a string (Express 5 types them loosely). */
export const param = (req: Request, name: string): string => String(req.params[name] ?? "");

/**
 * The request body in the service's camelCase (the REST API speaks snake_case). Untyped, as Express
 * hands over `req.body`: nothing here has been checked yet, the service parses it with its schema.
 */
export const input = (req: Request): any => toCamel(req.body ?? {});
export const queryInput = (req: Request): any => toCamel({ ...(req.query as object) });

export function mountRoutes(router: Router, routes: readonly RouteDef[]): void {
  for (const r of routes) {
    router[r.method](r.path, (req, res) => {
      // Routers without caller resolution (health) have no caller to hold to a scope.
      if (req.ctx) {
        requireScope(req.ctx, r.scope);
        requireApiKeyScope(req.ctx, r.apiKey);
      }
      return r.handle(req, res);
    });
  }
}

/** After every route: a known path with another method is 405 (with Allow), anything else 404. */
export function mountFallbacks(router: Router, routes: readonly RouteDef[], options: { notFound?: boolean } = {}): void {
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
  if (options.notFound === false) return;
  router.use((req: Request, _res: Response, next: NextFunction) =>
    next(new AppError("NOT_FOUND", 404, `No route for ${req.method} ${req.baseUrl}${req.path}`)),
  );
}
