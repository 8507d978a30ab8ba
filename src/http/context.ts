import type { NextFunction, Request, Response } from "express";
import type { ActorService } from "../modules/auth/index.js";
import { AppError, isAppError } from "../lib/errors.js";
import type { StoredSession } from "../infra/session-store.js";

/** Reads `Authorization: Bearer <token>` (any case of "Bearer", as the original CLI sends "bearer"). */
export function bearerToken(req: Request): string | null {
  const header = req.get("authorization");
  if (!header) return null;
  const match = /^bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError("INVALID_AUTH_FORMAT", 401, "Authorization header must be 'Bearer <token>'");
  return match[1]!;
}

/**
 * Resolves the caller once per request. The bearer header wins over the cookie; the cookie's
 * session was already loaded by express-session, so it costs no second store read.
 */
export async function resolveRequestContext(actors: ActorService, req: Request, options: { acceptDelegated?: boolean; acceptApiKeys?: boolean } = {}): Promise<void> {
  const bearer = bearerToken(req);
  const cookieSession = (req.session as unknown as StoredSession | undefined) ?? null;
  const cookieToken = !bearer && cookieSession?.auth ? req.sessionID : null;
  req.ctx = await actors.resolve({
    bearer,
    acceptDelegated: options.acceptDelegated ?? false,
    acceptApiKeys: options.acceptApiKeys ?? false,
    cookieToken,
    cookieSession,
    requestId: req.requestId,
    ip: req.ip ?? null,
    userAgent: req.get("user-agent") ?? null,
  });
  const delegated = req.ctx.actor.kind === "user" && req.ctx.actor.delegation !== undefined;
  req.sessionToken = req.ctx.actor.kind === "user" && !delegated ? (bearer ?? cookieToken) : null;
  req.authVia = req.ctx.actor.kind === "anonymous" ? null : bearer ? "bearer" : "cookie";
}

/**
 * For the hosted pages: the caller, left anonymous when a credential is refused (the page asks the
 * visitor to sign in). PostgreSQL or Redis down still fails the request: a "try again shortly"
 * page (src/pages/outage-page.ts), not a sign-in prompt that would fail the same way.
 */
export async function resolvePageContext(actors: ActorService, req: Request): Promise<void> {
  try {
    await resolveRequestContext(actors, req);
  } catch (e) {
    if (!isAppError(e)) throw e;
  }
}

/** The REST door: sessions, delegated access tokens and organization API keys (each route declares which). */
export function contextMiddleware(actors: ActorService) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    await resolveRequestContext(actors, req, { acceptDelegated: true, acceptApiKeys: true });
    next();
  };
}
