import type { Request } from "express";
import type { KoaContextWithOIDC } from "oidc-provider";
import { anonymousContext, type RequestContext } from "../lib/request-context.js";

/** The caller of a provider request, for the audit trail: no Keyward actor, its address and user agent (Express resolved them). */
export function requestContext(ctx: KoaContextWithOIDC): RequestContext {
  const req = ctx.req as Request;
  return anonymousContext(req.requestId ?? "oidc", req.ip ?? null, req.get?.("user-agent") ?? null);
}
