import type { Request } from "express";
import type { Config } from "../../src/config/index.js";
import type { Services } from "../../src/container.js";
import { mfaTokenOf, ssoLinkBindingOf } from "../../src/http/session.js";
import { sendSession, ssoLinkField, ssoLinkOf } from "../sign-in-answer.js";
import { assertionSchema, mfaLoginCodeSchema as loginCodeSchema, mfaTokenSchema, codeSchema, completeRegistrationSchema, passwordSchema, renameSchema, compliancePageSchema, policySchema } from "../../src/modules/auth/index.js";
import { Verbatim } from "../../src/lib/strings.js";
import { sendData, sendList } from "../envelope.js";
import { input, param, queryInput, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

// The compliance query as documented: both optional (without either, every member).
const complianceQueryDoc = compliancePageSchema.extend({ page: compliancePageSchema.shape.page.unwrap().optional(), pageSize: compliancePageSchema.shape.pageSize.unwrap().optional() });

// The pending sign-in's mfa_token comes in the body, or in the cookie /auth/login set for browsers.
const cookieOrBody = { mfaToken: true } as const;
const attempt = {
  401: "The code or assertion is wrong, or no sign-in is pending (INVALID_MFA_CODE, WEBAUTHN_VERIFICATION_FAILED, MFA_SESSION_EXPIRED)",
  409: "Another second-factor attempt on this sign-in is being checked (MFA_ATTEMPT_IN_PROGRESS)",
};

/** The body with the MFA token filled in from the cookie when the browser sent it there. */
const withMfaToken = (req: Request, config: Config) => ({ ...input(req), mfaToken: mfaTokenOf(req, config) });

export const mfaRoutes = (s: Services, config: Config): RouteDef[] => [
  {
    method: "post", path: "/auth/totp/verify", errors: attempt, data: data.session, tag: "mfa", auth: "none", body: loginCodeSchema.partial(cookieOrBody),
    summary: "Second factor: a TOTP code, or a backup code (is_backup_code), with the mfa_token from /auth/login",
    handle: async (req, res) => sendSession(res, config, await s.mfaLogin.completeWithCode(req.ctx, withMfaToken(req, config), ssoLinkBindingOf(req, config))),
  },
  {
    method: "post", path: "/auth/mfa/backup-code", errors: attempt, data: data.session, tag: "mfa", auth: "none", body: loginCodeSchema.omit({ isBackupCode: true }).partial(cookieOrBody), summary: "Second factor: a backup code (each works once)",
    handle: async (req, res) => sendSession(res, config, await s.mfaLogin.completeWithCode(req.ctx, { ...withMfaToken(req, config), isBackupCode: true }, ssoLinkBindingOf(req, config))),
  },
  {
    method: "post", path: "/auth/webauthn/mfa/begin", tag: "mfa", auth: "none", body: mfaTokenSchema.partial(cookieOrBody), summary: "Second factor: WebAuthn options for the pending sign-in",
    handle: async (req, res) => {
      const { challengeId, options } = await s.mfaLogin.beginWebauthn(req.ctx, withMfaToken(req, config));
      sendData(res, 200, "Use your security key or passkey", { challengeId, options: new Verbatim(options) });
    },
  },
  {
    method: "post", path: "/auth/webauthn/mfa/complete", errors: attempt, data: data.session, tag: "mfa", auth: "none", body: assertionSchema, summary: "Second factor: the WebAuthn assertion",
    handle: async (req, res) => sendSession(res, config, await s.mfaLogin.completeWebauthn(req.ctx, withMfaToken(req, config), ssoLinkBindingOf(req, config))),
  },
  {
    method: "post", path: "/auth/webauthn/login/begin", tag: "mfa", auth: "none", summary: "Passkey sign-in (usernameless): options",
    handle: async (req, res) => {
      const { challengeId, options } = await s.mfaLogin.beginPasskey(req.ctx);
      sendData(res, 200, "Use your passkey", { challengeId, options: new Verbatim(options) });
    },
  },
  {
    method: "post", path: "/auth/webauthn/login/complete", errors: { 401: "The passkey response could not be verified (WEBAUTHN_VERIFICATION_FAILED)", 403: "The account is suspended (ACCOUNT_SUSPENDED), or its organization requires single sign-on (SSO_REQUIRED, details.start_url)" }, data: data.session, tag: "mfa", auth: "none", body: assertionSchema.omit(cookieOrBody).extend(ssoLinkField), summary: "Passkey sign-in: the assertion; opens a session (with sso_link, confirms that pending SSO link and opens an SSO session)",
    handle: async (req, res) => {
      const body = input(req);
      sendSession(res, config, await s.mfaLogin.completePasskey(req.ctx, body, ssoLinkOf(body), ssoLinkBindingOf(req, config)));
    },
  },
  {
    method: "post", path: "/auth/webauthn/register/begin", tag: "mfa", auth: "user", summary: "Enroll a passkey or security key: options",
    handle: async (req, res) => {
      const { challengeId, options } = await s.mfa.beginWebauthnRegistration(req.ctx);
      sendData(res, 200, "Create a credential", { challengeId, options: new Verbatim(options) });
    },
  },
  {
    method: "post", path: "/auth/webauthn/register/complete", data: data.credentialRegistered, tag: "mfa", auth: "user", body: completeRegistrationSchema, status: 201,
    summary: "Enroll: the attestation; the first MFA method also returns 10 backup codes (shown once)",
    handle: async (req, res) => {
      const { credential, backupCodes } = await s.mfa.completeWebauthnRegistration(req.ctx, input(req));
      sendData(res, 201, "Credential registered", { credentialId: credential.id, credential, backupCodes });
    },
  },
  {
    method: "get", path: "/auth/webauthn/credentials", data: data.credentials, tag: "mfa", auth: "user", summary: "Your WebAuthn credentials",
    handle: async (req, res) => sendList(res, 200, "Credentials", "credentials", await s.mfa.listCredentials(req.ctx)),
  },
  {
    method: "patch", path: "/auth/webauthn/credentials/:credentialId", data: data.credential, tag: "mfa", auth: "user", body: renameSchema, summary: "Rename a credential",
    handle: async (req, res) => sendData(res, 200, "Credential renamed", { credential: await s.mfa.renameCredential(req.ctx, param(req, "credentialId"), input(req)) }),
  },
  {
    method: "delete", path: "/auth/webauthn/credentials/:credentialId", data: null, tag: "mfa", auth: "user", summary: "Remove a credential",
    handle: async (req, res) => {
      await s.mfa.deleteCredential(req.ctx, param(req, "credentialId"));
      sendData(res, 200, "Credential removed");
    },
  },
  {
    method: "get", path: "/auth/webauthn/status", tag: "mfa", auth: "user", summary: "Whether WebAuthn is enrolled",
    handle: async (req, res) => {
      const st = await s.mfa.status(req.ctx);
      sendData(res, 200, "WebAuthn status", { webauthnEnabled: st.webauthnEnabled, credentialCount: st.credentialCount });
    },
  },
  {
    method: "get", path: "/auth/mfa/status", data: data.mfaStatus, tag: "mfa", auth: "user", summary: "Your MFA methods and remaining backup codes",
    handle: async (req, res) => sendData(res, 200, "MFA status", await s.mfa.status(req.ctx)),
  },
  {
    method: "post", path: "/auth/totp/enroll", data: data.totpEnrollment, errors: { 409: "An authenticator app is already enrolled (TOTP_ALREADY_ENABLED)" }, tag: "mfa", auth: "user", summary: "Start TOTP enrollment: secret, otpauth:// URI and QR code (backup codes come with verify-enrollment, once the app is proven)",
    handle: async (req, res) => sendData(res, 200, "Scan the code with your authenticator app", await s.mfa.enrollTotp(req.ctx)),
  },
  {
    method: "post", path: "/auth/totp/verify-enrollment", data: data.totpEnabled, tag: "mfa", auth: "user", body: codeSchema, summary: "Confirm TOTP enrollment with a first code",
    handle: async (req, res) => sendData(res, 200, "Authenticator app enrolled", await s.mfa.verifyTotpEnrollment(req.ctx, input(req))),
  },
  {
    method: "delete", path: "/auth/totp/disable", data: null, tag: "mfa", auth: "user", body: passwordSchema, summary: "Remove the authenticator app (current password required)",
    handle: async (req, res) => {
      await s.mfa.disableTotp(req.ctx, input(req));
      sendData(res, 200, "Authenticator app removed");
    },
  },
  {
    method: "get", path: "/auth/totp/status", tag: "mfa", auth: "user", summary: "TOTP status and remaining backup codes",
    handle: async (req, res) => {
      const st = await s.mfa.status(req.ctx);
      sendData(res, 200, "TOTP status", { totpEnabled: st.totpEnabled, verifiedAt: st.totpVerifiedAt, backupCodesRemaining: st.backupCodesRemaining });
    },
  },
  {
    method: "post", path: "/auth/totp/regenerate-backup-codes", data: data.backupCodes, tag: "mfa", auth: "user", body: passwordSchema, summary: "New backup codes (current password required); the old ones stop working",
    handle: async (req, res) => sendData(res, 200, "Backup codes regenerated", await s.mfa.regenerateBackupCodes(req.ctx, input(req))),
  },
  {
    method: "get", path: "/users/me/mfa-compliance", tag: "mfa", auth: "user", summary: "Your standing under each organization's MFA policy",
    handle: async (req, res) => sendData(res, 200, "MFA compliance", { organizations: await s.mfaPolicy.myCompliance(req.ctx) }),
  },
  {
    method: "get", path: "/organizations/:orgId/security-policy", tag: "mfa", auth: "user", org: "guest", summary: "The organization's MFA policy",
    handle: async (req, res) => sendData(res, 200, "Security policy", { securityPolicy: await s.mfaPolicy.getPolicy(req.ctx, param(req, "orgId")) }),
  },
  {
    method: "put", path: "/organizations/:orgId/security-policy", tag: "mfa", auth: "user", org: "admin", body: policySchema,
    summary: "Set the MFA policy (disabled | optional | required, grace period, reminder lead time)",
    handle: async (req, res) => sendData(res, 200, "Security policy updated", { securityPolicy: await s.mfaPolicy.putPolicy(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "get", path: "/organizations/:orgId/mfa-compliance", tag: "mfa", auth: "user", org: "admin", query: complianceQueryDoc,
    summary: "Each member's MFA standing, by email (all of them; or one page with ?page=&page_size=, answering count, page and page_size)",
    handle: async (req, res) => {
      // Pages when the caller asks for them, as the original API did; every member otherwise.
      if (!("page" in req.query || "page_size" in req.query)) return sendList(res, 200, "MFA compliance", "members", await s.mfaPolicy.compliance(req.ctx, param(req, "orgId")));
      const { items, ...page } = await s.mfaPolicy.compliancePage(req.ctx, param(req, "orgId"), queryInput(req));
      sendData(res, 200, "MFA compliance", { members: items, ...page });
    },
  },
  {
    method: "post", path: "/organizations/:orgId/members/:userId/send-mfa-reminder", tag: "mfa", auth: "user", org: "admin", summary: "Email a member an MFA reminder now",
    handle: async (req, res) => sendData(res, 200, "Reminder handled", await s.mfaPolicy.sendReminder(req.ctx, param(req, "orgId"), param(req, "userId"))),
  },
];
