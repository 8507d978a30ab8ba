import type { IncomingMessage } from "node:http";
import type { Request } from "express";
import type { StoredSession } from "../infra/session-store.js";
import type { RequestContext } from "../lib/request-context.js";
import type { ActorService } from "../modules/auth/index.js";

export interface KeywardUser {
  userId: string;
  email: string;
  /** When the user signed in (ms since the epoch) and how ("password+totp", "passkey" …). */
  authAt: number;
  method: string;
  /** Public id of the Keyward session. */
  sessionId: string;
  ctx: RequestContext;
}

export type KeywardUserReader = (req: IncomingMessage) => Promise<KeywardUser | null>;

/**
 * The Keyward user signed in on this browser, from the session cookie only (never a bearer
 * header: the provider's own endpoints carry client credentials there). express-session has
 * already loaded the record; resolving it again is memoised per request.
 */
export function createKeywardSessionReader(actors: ActorService): KeywardUserReader {
  const cache = new WeakMap<IncomingMessage, Promise<KeywardUser | null>>();
  const read = async (raw: IncomingMessage): Promise<KeywardUser | null> => {
    const req = raw as Request;
    const stored = req.session as unknown as StoredSession | undefined;
    const resolved = await actors.resolveBrowserSession({
      cookieToken: stored?.auth ? req.sessionID : null,
      cookieSession: stored ?? null,
      requestId: req.requestId,
      ip: req.ip ?? null,
      userAgent: req.get("user-agent") ?? null,
    });
    if (!resolved || resolved.ctx.actor.kind !== "user") return null;
    const { actor } = resolved.ctx;
    return { userId: actor.userId, email: actor.email, authAt: resolved.session.createdAt, method: resolved.session.method ?? "password", sessionId: resolved.session.id, ctx: resolved.ctx };
  };
  return (req) => {
    let pending = cache.get(req);
    if (!pending) {
      pending = read(req);
      cache.set(req, pending);
    }
    return pending;
  };
}

/** RFC 8176 authentication method references for a Keyward sign-in method. */
export function amrOf(method: string): string[] {
  const parts = method.split("+");
  const amr = new Set<string>();
  for (const part of parts) {
    if (part === "password") amr.add("pwd");
    if (part === "totp") amr.add("otp");
    if (part === "backup_code") amr.add("otp");
    if (part === "webauthn" || part === "passkey") amr.add("hwk");
  }
  // A passkey is possession plus user verification; a password with a second factor is two factors.
  if (parts.length > 1 || parts.includes("passkey")) amr.add("mfa");
  return [...amr];
}
