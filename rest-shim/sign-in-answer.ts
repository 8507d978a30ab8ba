// What the REST sign-in routes (password, second step, passkey, SSO link confirmation) share.
import type { Response } from "express";
import { z } from "zod";
import type { Config } from "../src/config/index.js";
import { clearMfaCookie, setSessionCookie } from "../src/http/session.js";
import type { SessionIssued } from "../src/modules/auth/index.js";
import { sendData } from "./envelope.js";

/** A finished sign-in: the session cookie for browsers, the token for the CLI and scripts (and what `extra` adds). */
export function sendSession(res: Response, config: Config, result: SessionIssued, message = "Login successful", extra: Record<string, unknown> = {}): void {
  setSessionCookie(res, config, result.token, result.persistent ? result.expiresAt : null);
  clearMfaCookie(res, config);
  sendData(res, 200, message, { user: result.user, token: result.token, expiresAt: result.expiresAt, ...extra });
}

/** A pending SSO link that a sign-in confirms (issue 35): the field its body may carry. */
export const ssoLinkField = { ssoLink: z.string().min(1).max(128).optional().describe("The pending SSO link (sso_link) this sign-in confirms, from the sign-in page's address") };

export const ssoLinkOf = (body: unknown): string | undefined => {
  const v = (body as { ssoLink?: unknown } | undefined)?.ssoLink;
  return typeof v === "string" && v.length <= 128 ? v : undefined;
};
