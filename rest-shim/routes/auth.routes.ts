import type { Config } from "../../src/config/index.js";
import type { Services } from "../../src/container.js";
import { activateSchema, loginSchema, emailOnlySchema, registerSchema, resetPasswordSchema, tokenRedirectSchema, tokenSchema, cliAuthorizeSchema, cliLookupSchema, cliStartSchema } from "../../src/modules/auth/index.js";
import { sendData, sendList } from "../envelope.js";
import { clearSessionCookie, setMfaCookie, ssoLinkBindingOf } from "../../src/http/session.js";
import { sendSession, ssoLinkField, ssoLinkOf } from "../sign-in-answer.js";
import { input, queryInput, type RouteDef } from "../route.js";
import { data } from "../views/index.js";
import { Verbatim } from "../../src/lib/strings.js";
import { auditQuerySchema } from "../../src/modules/users/index.js";

/** A pending SSO link a sign-in confirms: the id the sign-in page got from the SSO answer (issue 35). */
const loginWithLinkSchema = loginSchema.extend(ssoLinkField);

export const authRoutes = (s: Services, config: Config): RouteDef[] => [
  {
    method: "post", path: "/auth/register", tag: "auth", auth: "none", body: registerSchema, status: 201,
    summary: "Create an account; a verification link is emailed (same answer for an existing address)",
    handle: async (req, res) => {
      const { message, email } = await s.accounts.register(req.ctx, input(req));
      sendData(res, 201, message, { email });
    },
  },
  {
    method: "post", path: "/auth/login", errors: { 401: "Wrong email or password (AUTHENTICATION_ERROR)", 403: "The account may not sign in (suspended, not activated), its organization requires single sign-on (SSO_REQUIRED, details.start_url), a cross-site request (CSRF_CHECK_FAILED), or an OIDC access token (INSUFFICIENT_SCOPE)" }, data: data.login, tag: "auth", auth: "none", body: loginWithLinkSchema,
    summary: "Sign in with email and password; returns a session token and sets the session cookie. With sso_link (in the browser an SSO sign-in sent here), it confirms linking that account to the organization's identity provider and opens an SSO session",
    handle: async (req, res) => {
      const body = input(req);
      const result = await s.login.loginWithPassword(req.ctx, body, ssoLinkOf(body), ssoLinkBindingOf(req, config));
      if (result.kind === "session") return sendSession(res, config, result);
      // The second factor is still to come: no session yet.
      setMfaCookie(res, config, result.mfaToken, result.expiresAt);
      sendData(res, 200, "Multi-factor authentication required", {
        requiresMfa: true,
        mfaToken: result.mfaToken,
        mfaMethods: result.methods,
        expiresAt: result.expiresAt,
        requiresWebauthn: result.methods.includes("webauthn"),
        requiresTotp: result.methods.includes("totp"),
      });
    },
  },
  {
    method: "post", path: "/auth/logout", data: data.signedOut, tag: "auth", auth: "optional",
    summary: "End the current session and clear the session cookie (200 without a session too: there is nothing to end); idp_logout_url, when set, is where the browser goes to sign out at the organization's identity provider",
    handle: async (req, res) => {
      const signedOut = await s.ssoLogout.signOut(req.ctx);
      clearSessionCookie(res, config);
      sendData(res, 200, "Logout successful", signedOut);
    },
  },
  {
    method: "get", path: "/auth/me", data: data.meWithOrganizations, tag: "auth", auth: "user", scope: "profile:read", summary: "The signed-in user, with the organizations they are a member of (id, name, slug, role)",
    handle: async (req, res) => sendData(res, 200, "Current user", await s.users.getMeWithOrganizations(req.ctx)),
  },
  {
    method: "post", path: "/auth/me/resend-verification", data: null, errors: { 409: "The address is already verified (EMAIL_ALREADY_VERIFIED)" }, tag: "auth", auth: "user",
    summary: "Email a new verification link to the signed-in user (rate limited per user)",
    handle: async (req, res) => sendData(res, 200, (await s.accounts.resendVerificationForMe(req.ctx)).message),
  },
  {
    method: "post", path: "/auth/resend-verification", data: null, tag: "auth", auth: "none", body: emailOnlySchema,
    summary: "Email a new verification link to an address (same answer for every address)",
    handle: async (req, res) => sendData(res, 200, (await s.accounts.resendVerificationByEmail(req.ctx, input(req))).message),
  },
  {
    method: "post", path: "/auth/verify-email", errors: { 409: "An email change to an address another account took meanwhile (EMAIL_TAKEN)" }, tag: "auth", auth: "none", body: tokenSchema,
    summary: "Verify an email address with the emailed token (also completes an email change)",
    handle: async (req, res) => sendData(res, 200, "Email address verified", { user: await s.accounts.verifyEmail(req.ctx, input(req)) }),
  },
  {
    method: "post", path: "/auth/forgot-password", data: null, tag: "auth", auth: "none", body: emailOnlySchema,
    summary: "Email a password reset link (same answer for every address)",
    handle: async (req, res) => sendData(res, 200, (await s.accounts.forgotPassword(req.ctx, input(req))).message),
  },
  {
    method: "post", path: "/auth/reset-password", data: null, tag: "auth", auth: "none", body: resetPasswordSchema,
    summary: "Set a new password with a reset token; every session of the account ends",
    handle: async (req, res) => sendData(res, 200, (await s.accounts.resetPassword(req.ctx, input(req))).message),
  },
  {
    method: "post", path: "/auth/activate", data: null, tag: "auth", auth: "none", body: activateSchema,
    summary: "Create the account an organization provisioned for you (or activate one an administrator created): choose its password with the emailed code",
    handle: async (req, res) => sendData(res, 200, (await s.invites.activate(req.ctx, input(req))).message),
  },
  {
    method: "post", path: "/auth/resend-activation", data: null, tag: "auth", auth: "none", body: emailOnlySchema,
    summary: "Email a new activation link (same answer for every address)",
    handle: async (req, res) => sendData(res, 200, (await s.accounts.resendActivation(req.ctx, input(req))).message),
  },
  {
    method: "get", path: "/auth/sessions", data: data.sessions, tag: "auth", auth: "user", summary: "The signed-in user's sessions",
    handle: async (req, res) => sendList(res, 200, "Sessions", "sessions", await s.mySessions.list(req.ctx)),
  },
  {
    method: "delete", path: "/auth/sessions", data: data.revokedSessions, tag: "auth", auth: "user", summary: "Sign out your other sessions (the one making the call stays)",
    handle: async (req, res) => {
      const { revoked } = await s.mySessions.revokeOthers(req.ctx);
      sendData(res, 200, revoked === 1 ? "1 other session signed out" : `${revoked} other sessions signed out`, { revoked });
    },
  },
  {
    method: "delete", path: "/auth/sessions/:sessionId", data: null, tag: "auth", auth: "user", summary: "Revoke one of your sessions",
    handle: async (req, res) => {
      await s.mySessions.revoke(req.ctx, String(req.params.sessionId));
      sendData(res, 200, "Session revoked");
    },
  },
  {
    method: "get", path: "/auth/token", tag: "auth", auth: "user", query: tokenRedirectSchema,
    redirect: { status: 302, description: "With ?redirect= (an allowed origin): the browser goes there with ?token=" },
    summary: "Hand the session token to a client: as data, or by redirect to an allowed origin",
    handle: async (req, res) => {
      const result = s.mySessions.tokenHandoff(req.ctx, req.sessionToken ?? "", queryInput(req));
      if ("redirectUrl" in result) res.redirect(302, result.redirectUrl);
      else sendData(res, 200, "Session token", result);
    },
  },
  {
    method: "get", path: "/auth/audit-logs", tag: "auth", auth: "user", query: auditQuerySchema,
    summary: "Your own audit log, newest first (?action=&page=&per_page=)",
    handle: async (req, res) => {
      const { items, ...page } = await s.users.listMyAuditLog(req.ctx, queryInput(req));
      sendData(res, 200, "Audit log", { auditLogs: items.map((e) => ({ ...e, metadata: new Verbatim(e.metadata) })), ...page });
    },
  },
  {
    method: "get", path: "/token_please", tag: "cli", auth: "none", query: cliStartSchema,
    redirect: { status: 302, only: true, description: "To the sign-in page, which hands the session to the waiting command-line client" },
    summary: "Command-line sign-in: ?redirect_url=http://127.0.0.1:<port>/?token= (loopback only); redirects the browser to sign in",
    handle: async (req, res) => {
      const { loginUrl } = await s.cliLogin.start(req.ctx, queryInput(req));
      res.setHeader("Cache-Control", "no-store");
      res.redirect(302, loginUrl);
    },
  },
  {
    method: "get", path: "/cli/redirect-url", errors: { 404: "No pending sign-in with this token, or it expired (TOKEN_NOT_FOUND)", 503: "The sign-in store is unavailable (SERVICE_UNAVAILABLE)" }, tag: "cli", auth: "user", query: cliLookupSchema,
    summary: "Where the command-line client waits for a pending sign-in (?token=)",
    handle: async (req, res) => sendData(res, 200, "Redirect URL", await s.cliLogin.redirectUrl(req.ctx, queryInput(req))),
  },
  {
    method: "post", path: "/cli/authorize", errors: { 404: "No pending sign-in with this token, or it expired (TOKEN_NOT_FOUND)" }, tag: "cli", auth: "user", body: cliAuthorizeSchema,
    summary: "Confirm a command-line sign-in: the client gets a session of its own at its loopback address",
    handle: async (req, res) => sendData(res, 200, "Command-line client signed in", await s.cliLogin.authorize(req.ctx, input(req), req.authVia ?? null)),
  },
];
