import type { Db, Executor } from "../../infra/db.js";
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
  opts: { rememberMe: boolean; method: string; passwordFingerprint?: string; ssoLink?: string },
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
    ...(opts.ssoLink ? { ssoLink: opts.ssoLink } : {}),
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

/**
 * A pending SSO link (the SSO module's, a port): an SSO sign-in found this account unlinked, and its
 * holder confirms by signing in as they do now, in the browser that came back from the provider.
 * Such a sign-in, for exactly that account, is the one SSO_REQUIRED lets through; it links the
 * identity and opens an SSO session.
 */
export interface SsoLinkPort {
  pendingFor(id: string | undefined, binding: string | undefined, email: string): Promise<{ userId: string; connectionId: string; organizationId: string; maxAgeSeconds: number | null } | null>;
  /**
   * Inside the session's transaction: uses the pending link up and links; throws when it cannot.
   * What it returns records the session once issued.
   */
  confirm(tx: Executor, ctx: RequestContext, id: string, binding: string | undefined, user: UserRow, method: string): Promise<SsoLinkConfirmed>;
}

/** A confirmed pending link (the SSO module's). */
export interface SsoLinkConfirmed {
  /** After the session is issued: records it as one the connection issued, so single logout (both ways) reaches it. */
  sessionOpened(sessionId: string): Promise<void>;
}

/**
 * The SSO session a pending link's confirmation opens: linked inside the session's transaction,
 * then recorded as the connection's session, exactly as a direct SSO sign-in's is (the SSO module's
 * sign-out goes on to the IdP, and the IdP's logout ends it).
 */
export async function issueLinkedSession(
  deps: { issuer: SessionIssuer; ssoLinks: SsoLinkPort },
  ctx: RequestContext,
  user: UserRow,
  o: { rememberMe: boolean; link: { id: string; binding: string | undefined }; method: string; passwordFingerprint?: string | undefined; maxAgeSeconds: number | null },
): Promise<SessionIssued> {
  let confirmed: SsoLinkConfirmed | undefined;
  const session = await deps.issuer.issue(
    ctx,
    user,
    o.rememberMe,
    "sso",
    async (tx) => {
      confirmed = await deps.ssoLinks.confirm(tx, ctx, o.link.id, o.link.binding, user, o.method);
    },
    o.passwordFingerprint,
    o.maxAgeSeconds ?? undefined,
  );
  // Should this fail, the session's token was never handed out.
  await confirmed!.sessionOpened(session.sessionId);
  return session;
}

/** The pending link a sign-in carries: its id (from the page) and this browser's binding (a cookie). */
export interface SsoLinkCarried {
  id?: string | undefined;
  binding?: string | undefined;
}

type LinkGrant = NonNullable<Awaited<ReturnType<SsoLinkPort["pendingFor"]>>>;

/**
 * The pending link a sign-in for `user` may use, or null; refuses as SSO_REQUIRED always did when
 * the address requires SSO and the sign-in carries no usable link for this account of that organization.
 */
export async function ssoGate(
  deps: { db: Db; audit: AuditService; ssoRequirement?: SsoRequirementPort | undefined; ssoLinks?: SsoLinkPort | undefined },
  ctx: RequestContext,
  email: string,
  userId: string | null,
  method: string,
  carried: SsoLinkCarried | undefined,
): Promise<LinkGrant | null> {
  const sso = await deps.ssoRequirement?.requiredFor(email);
  let link = carried?.id && deps.ssoLinks ? await deps.ssoLinks.pendingFor(carried.id, carried.binding, email) : null;
  if (link && userId && link.userId !== userId) link = null;
  if (link && sso && link.organizationId !== sso.organizationId) link = null;
  if (sso && !link) {
    await deps.audit.record(deps.db, ctx, AuditAction.ssoRequiredRefused, { userId, organizationId: sso.organizationId, success: false, metadata: { email, method, connectionId: sso.connectionId } });
    throw AuthErrors.ssoRequired(sso.startUrl);
  }
  return link;
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
  ssoLinks?: SsoLinkPort;
  config: { loginIp: RateRule };
}

export class LoginService {
  constructor(private readonly deps: LoginDeps) {}

  /**
   * Password sign-in. Guard order matters: throttle first, then the password, and only then the
   * account state, so a guesser learns nothing about an account whose password they do not have.
   * An account with MFA never gets a session from the password alone. `ssoLinkId`/`ssoLinkBinding`:
   * a pending SSO link the sign-in confirms (the page's id, the browser's cookie).
   */
  async loginWithPassword(ctx: RequestContext, input: LoginInput, ssoLinkId?: string, ssoLinkBinding?: string): Promise<LoginOutcome> {
    const ssoLink: SsoLinkCarried = { id: ssoLinkId, binding: ssoLinkBinding };
    const { db, audit, limits, issuer, credentials, config } = this.deps;
    // Slows password spraying from one address.
    await limits.consume("login-ip", config.loginIp, ctx.ip ?? "unknown");
    const data = parseInput(loginSchema, input);
    const email = normalizeEmail(data.email);
    // An address whose organization requires SSO has no password sign-in. Decided by its domain
    // alone, before the password is checked: it says nothing about whether an account exists.
    // Except to confirm a pending link, in the browser that holds it and for the address it names
    // (which that browser's provider answer already showed).
    const link = await ssoGate(this.deps, ctx, email, null, "password", ssoLink);

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

    // The pending link names this account, or the sign-in is refused as SSO_REQUIRED refuses it.
    const linking = link ? await ssoGate(this.deps, ctx, email, user.id, "password", ssoLink) : null;
    const challenge = await startMfaChallenge(this.deps, ctx, user, { rememberMe: data.rememberMe, method: "password", passwordFingerprint, ...(linking ? { ssoLink: ssoLink.id! } : {}) }, mfa);
    if (challenge) return challenge;
    if (linking) {
      const link = { id: ssoLink.id!, binding: ssoLink.binding };
      const session = await issueLinkedSession({ issuer, ssoLinks: this.deps.ssoLinks! }, ctx, user, { rememberMe: data.rememberMe, link, method: "password", passwordFingerprint, maxAgeSeconds: linking.maxAgeSeconds });
      return { kind: "session", ...session };
    }
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
