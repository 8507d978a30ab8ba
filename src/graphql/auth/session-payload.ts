import type { Response } from "express";
import type { Config } from "../../config/index.js";
import { clearMfaCookie, setSessionCookie } from "../../http/session.js";
import type { SessionIssued } from "../../modules/auth/index.js";
import type { AuthPayload } from "./auth.types.js";

/** A finished sign-in in GraphQL: the session goes into the HttpOnly cookie, never the body. */
export function sessionPayload(res: Response, config: Config, result: SessionIssued): AuthPayload {
  setSessionCookie(res, config, result.token, result.persistent ? result.expiresAt : null);
  clearMfaCookie(res, config);
  return { user: result.user as AuthPayload["user"], expiresAt: result.expiresAt, sessionId: result.sessionId, mfaRequired: false, mfaMethods: [] };
}
