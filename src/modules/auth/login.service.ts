import type { Db } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import type { UserRow } from "../users/index.js";
import { AuthErrors } from "./auth.errors.js";
import { loginSchema, type LoginInput } from "./auth.schemas.js";
import type { CredentialsService } from "./credentials.service.js";
import { mfaRepository, type MfaMethods } from "./mfa/mfa.repository.js";
import type { PendingLoginStore } from "./mfa/pending-login.js";
import type { SessionIssued, SessionIssuer } from "./session-issuer.js";
import type { SessionsService } from "./sessions/sessions.service.js";

/** A password sign-in either opens a session or, with MFA enrolled, waits for the second factor. */
export type LoginOutcome = ({ kind: "session" } & SessionIssued) | MfaChallenge;

export interface MfaChallenge {
  kind: "mfa";
  mfaToken: string;
  expiresAt: Date;
  methods: Array<"webauthn" | "totp" | "backup_code">;
}

/**
 * An account with MFA never gets a session from a first factor alone (password or an external
 * provider): it gets a short-lived pending sign-in that a second factor completes. Null when the
 * account has no MFA method.
 */
export async function startMfaChallenge(
  deps: { db: Db; audit: AuditService; pending: PendingLoginStore },
  ctx: RequestContext,
  user: UserRow,
  opts: { rememberMe: boolean; method: string; passwordFingerprint?: string },
  /** The account's methods when the caller read them with the account (the password sign-in does). */
  enrolled?: MfaMethods,
): Promise<MfaChallenge | null> {
  const methods = enrolled ?? (await mfaRepository.methods(deps.db, user.id));
  if (methods.webauthn === 0 && !methods.totp) return null;
  const pending = await deps.pending.create({
    userId: user.id,
    rememberMe: opts.rememberMe,
    method: opts.method,
    userAgent: ctx.userAgent,
    ...(opts.passwordFingerprint ? { passwordFingerprint: opts.passwordFingerprint } : {}),
  });
  await deps.audit.record(deps.db, ctx, AuditAction.userLoginMfaRequired, { userId: user.id, metadata: { methods, first_factor: opts.method } });
  return {
    kind: "mfa",
    mfaToken: pending.token,
    expiresAt: pending.expiresAt,
    methods: [...(methods.webauthn > 0 ? (["webauthn"] as const) : []), ...(methods.totp ? (["totp"] as const) : []), ...(methods.backupCodes > 0 ? (["backup_code"] as const) : [])],
  };
}

/**
 * The SSO module's answer to "must this address sign in through its organization's identity
 * provider?" (a port: that module sits above this one; src/container.ts wires it).
 */
export interface SsoRequirementPort {
  requiredFor(email: string): Promise<{ startUrl: string; connectionId: string; organizationId: string } | null>;
}

export interface LoginDeps {
  db: Db;
  audit: AuditService;
  limits: RateLimitService;
  sessions: SessionsService;
  issuer: SessionIssuer;
  pending: PendingLoginStore;
  credentials: CredentialsService;
  ssoRequirement?: SsoRequirementPort;
  config: { loginIp: RateRule };
}

export class LoginService {
  constructor(private readonly deps: LoginDeps) {}

  /**
   * Password sign-in. Guard order matters: throttle first, then the password, and only then the
   * account state, so a guesser learns nothing about an account whose password they do not have.
   * An account with MFA never gets a session from the password alone.
   */
  async loginWithPassword(ctx: RequestContext, input: LoginInput): Promise<LoginOutcome> {
    const { db, audit, limits, issuer, credentials, config } = this.deps;
    // Slows password spraying from one address.
    await limits.consume("login-ip", config.loginIp, ctx.ip ?? "unknown");
    const data = parseInput(loginSchema, input);
    const email = normalizeEmail(data.email);
    // An address whose organization requires SSO has no password sign-in. Decided by its domain
    // alone, before the password is checked: it says nothing about whether an account exists.
    const sso = await this.deps.ssoRequirement?.requiredFor(email);
    if (sso) {
      await audit.record(db, ctx, AuditAction.ssoRequiredRefused, { organizationId: sso.organizationId, success: false, metadata: { email, method: "password", connectionId: sso.connectionId } });
      throw AuthErrors.ssoRequired(sso.startUrl);
    }

    // Counted before hashing, per account and client; unknown accounts cost the same (no timing
    // oracle). A hash made with older parameters is upgraded on success.
    const { user, valid, mfa, passwordFingerprint } = await credentials.verifySignIn(ctx, email, data.password);
    if (!user || !valid) {
      await audit.record(db, ctx, AuditAction.userLoginFailed, {
        userId: user?.id ?? null,
        success: false,
        metadata: { email, reason: "invalid_credentials" },
      });
      throw AuthErrors.invalidCredentials();
    }
    // Suspension blocks sign-in (the password was right, so saying so leaks nothing).
    if (user.status !== "active") {
      await audit.record(db, ctx, AuditAction.userLoginFailed, { userId: user.id, success: false, metadata: { reason: user.status } });
      throw AuthErrors.accountSuspended();
    }

    const challenge = await startMfaChallenge(this.deps, ctx, user, { rememberMe: data.rememberMe, method: "password", passwordFingerprint }, mfa);
    if (challenge) return challenge;
    return { kind: "session", ...(await issuer.issue(ctx, user, data.rememberMe, "password", undefined, passwordFingerprint)) };
  }

  /** Ends the session the request came through. */
  async logout(ctx: RequestContext): Promise<void> {
    if (ctx.actor.kind !== "user" || !ctx.actor.sessionId) return;
    if (await this.deps.sessions.revoke(ctx.actor.userId, ctx.actor.sessionId)) {
      await this.deps.audit.record(this.deps.db, ctx, AuditAction.userLogout, { metadata: { session_id: ctx.actor.sessionId } });
    }
  }
}
