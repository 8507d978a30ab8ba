import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { isUniqueViolation } from "../../infra/db-errors.js";
import type { Logger } from "../../infra/logger.js";
import { pkceChallenge, randomToken } from "../../lib/crypto/index.js";
import { AppError, isAppError } from "../../lib/errors.js";
import { actingAs, type RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/audit.actions.js";
import type { AuditService } from "../audit/audit.service.js";
import type { AccountsService } from "../auth/accounts.service.js";
import { requireUser } from "../auth/guards.js";
import { startMfaChallenge, type MfaChallenge } from "../auth/login.service.js";
import type { PendingLoginStore } from "../auth/mfa/pending-login.js";
import type { SessionIssued, SessionIssuer } from "../auth/session-issuer.js";
import type { OrgsService } from "../orgs/orgs.service.js";
import type { RateLimitService, RateRule } from "../rate-limit/rate-limit.service.js";
import { usersRepository, type UserRow } from "../users/users.repository.js";
import { externalIdentitiesRepository } from "./external-identities.repository.js";
import type { OAuthFlow, OAuthFlowStore } from "./oauth-flow.store.js";
import { OAuthErrors } from "./oauth.errors.js";
import type { OAuthProvidersService } from "./oauth-providers.service.js";
import { authorizeQuerySchema, callbackQuerySchema, PROVIDER_LABEL, type ProviderName } from "./oauth.schemas.js";
import { IdpError, type ExternalProfile } from "./providers/idp.types.js";
import { landingUrl, type Landing } from "./oauth-landing.js";

export interface ExternalAuthDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  audit: AuditService;
  limits: RateLimitService;
  providers: OAuthProvidersService;
  flows: OAuthFlowStore;
  issuer: SessionIssuer;
  pending: PendingLoginStore;
  orgs: OrgsService;
  accounts: AccountsService;
  config: { publicUrl: string; appUrl: string; rate: RateRule };
}

export interface FlowStarted {
  authorizationUrl: string;
  state: string;
  /** The browser-binding value to keep in an HttpOnly cookie until the callback. */
  binding: string;
}

/** Where the browser goes after the callback, and what it carries there. */
export interface CallbackOutcome {
  redirectTo: string;
  session?: SessionIssued;
  mfa?: { token: string; expiresAt: Date };
}

const BINDING = /^[A-Za-z0-9_-]{43}$/;

/**
 * Sign-in, registration and account linking with GitHub and Google. The callback address is ours
 * alone; state, PKCE verifier and nonce never leave the server; an identity is found by the
 * provider's subject, never by its email.
 */
export class ExternalAuthService {
  constructor(private readonly deps: ExternalAuthDeps) {}

  /** Starts a flow: the URL to send the browser to at the provider. */
  async start(ctx: RequestContext, provider: unknown, input: unknown, binding: string | undefined): Promise<FlowStarted> {
    const { limits, providers, flows, audit, db, config } = this.deps;
    const name = providers.parseProvider(provider);
    // Codes go only to the configured callback: a caller-chosen redirect is refused, not ignored.
    const raw = (input ?? {}) as Record<string, unknown>;
    if (raw.redirectUri !== undefined || raw.redirectUrl !== undefined) throw OAuthErrors.redirectUriRefused();
    await limits.consume("oauth", config.rate, ctx.ip ?? "unknown");
    const q = parseInput(authorizeQuerySchema, input);
    const userId = q.flow === "link" ? requireUser(ctx).userId : null;
    const settings = await providers.settings(name);
    const bind = binding && BINDING.test(binding) ? binding : randomToken(32);
    const { state, flow } = await flows.create({ provider: name, flow: q.flow, userId, next: q.next ?? null }, bind);
    const url = await providers
      .client(name)
      .authorizationUrl(settings, { state, nonce: flow.nonce, codeChallenge: pkceChallenge(flow.codeVerifier), redirectUri: providers.callbackUrl(name) })
      .catch((e: unknown) => {
        throw this.upstream(name, e);
      });
    if (userId) await audit.record(db, ctx, AuditAction.externalLinkInitiated, { metadata: { provider: name } });
    return { authorizationUrl: url.toString(), state, binding: bind };
  }

  /**
   * The provider sent the browser back. Whatever happens, the answer is a redirect: to the page
   * the flow asked for, with a session, a pending second factor, or an error the page can show.
   */
  async complete(ctx: RequestContext, provider: unknown, query: unknown, binding: string | undefined): Promise<CallbackOutcome> {
    const name = this.deps.providers.parseProvider(provider);
    let flow: OAuthFlow | null = null;
    try {
      await this.deps.limits.consume("oauth", this.deps.config.rate, ctx.ip ?? "unknown");
      const q = parseInput(callbackQuerySchema, query);
      flow = q.state ? await this.deps.flows.take(q.state, name, binding) : null;
      if (!flow) throw OAuthErrors.invalidState();
      // The person declined (or the provider refused) at the provider.
      if (q.error) throw q.error === "access_denied" ? OAuthErrors.cancelled(PROVIDER_LABEL[name]) : OAuthErrors.providerError(PROVIDER_LABEL[name], q.error);
      if (!q.code) throw OAuthErrors.invalidState();
      const profile = await this.exchange(name, flow, q);
      if (flow.flow === "link") return await this.link(ctx, flow, profile);
      return await this.signIn(ctx, flow, profile);
    } catch (e) {
      const error = isAppError(e) ? e : new AppError("AUTH_FAILED", 500, "The sign-in could not be completed. Try again.");
      if (!isAppError(e)) this.deps.logger.error({ err: e, provider: name }, "external sign-in failed unexpectedly");
      const action = flow?.flow === "link" ? AuditAction.externalLinkFailed : AuditAction.externalLoginFailed;
      await this.deps.audit.record(this.deps.db, ctx, action, {
        userId: flow?.userId ?? null,
        success: false,
        errorMessage: error.message,
        metadata: { provider: name, flow: flow?.flow ?? null, code: error.code },
      });
      return { redirectTo: this.landing(flow, name, { kind: "error", code: error.code, message: error.message }) };
    }
  }

  private async exchange(name: ProviderName, flow: OAuthFlow, q: { code?: string; state?: string; iss?: string }): Promise<ExternalProfile> {
    const { providers } = this.deps;
    const redirectUri = providers.callbackUrl(name);
    const callbackUrl = new URL(redirectUri);
    callbackUrl.search = new URLSearchParams({ code: q.code!, state: q.state!, ...(q.iss ? { iss: q.iss } : {}) }).toString();
    const settings = await providers.settings(name);
    return providers
      .client(name)
      .exchange(settings, { callbackUrl, state: q.state!, nonce: flow.nonce, codeVerifier: flow.codeVerifier, redirectUri })
      .catch((e: unknown) => {
        throw this.upstream(name, e);
      });
  }

  /** Login and register: a linked identity signs in; an unknown one with an unused email gets an account. */
  private async signIn(ctx: RequestContext, flow: OAuthFlow, profile: ExternalProfile): Promise<CallbackOutcome> {
    const { db, clock, issuer } = this.deps;
    const label = PROVIDER_LABEL[profile.provider];
    const identity = await externalIdentitiesRepository.findBySubject(db, profile.provider, profile.subject);
    let user: UserRow | undefined;
    if (identity) {
      user = await usersRepository.findById(db, identity.userId);
      // The account behind it was deleted.
      if (!user) throw OAuthErrors.accountUnavailable();
      // Suspension blocks every way in.
      if (user.status !== "active") throw new AppError("ACCOUNT_SUSPENDED", 403, "This account is suspended. Contact your administrator.");
      await externalIdentitiesRepository.touch(db, identity.id, profile, clock.now());
    } else {
      user = await this.register(ctx, profile, label);
    }
    const method = profile.provider;
    const challenge = await startMfaChallenge(this.deps, ctx, user, { rememberMe: false, method });
    if (challenge) return this.mfaOutcome(flow, profile.provider, challenge);
    const session = await issuer.issue(ctx, user, false, method, async (tx) => {
      await this.deps.audit.record(tx, actingAs(ctx, user), AuditAction.externalLogin, {
        metadata: { provider: profile.provider, subject: profile.subject, new_account: !identity },
      });
    });
    return { session, redirectTo: this.landing(flow, profile.provider, { kind: "session" }) };
  }

  /**
   * First sign-in with an unknown identity: a new account (verified only if the provider says the
   * address is) and a personal organization, in one transaction. An address that already has an
   * account is never merged silently: its owner must sign in and link.
   */
  private async register(ctx: RequestContext, profile: ExternalProfile, label: string): Promise<UserRow> {
    const { db, clock, audit, orgs, accounts } = this.deps;
    if (!profile.email) throw OAuthErrors.emailRequired(label);
    const email = normalizeEmail(profile.email);
    try {
      return await db.transaction(async (tx) => {
        if (await usersRepository.findByEmail(tx, email)) throw OAuthErrors.accountExists(label);
        const now = clock.now();
        const inserted = await usersRepository.insert(tx, { email, fullName: profile.displayName?.slice(0, 255) ?? null, isSuperadmin: false, now });
        const user = profile.emailVerified ? (await usersRepository.update(tx, inserted.id, { emailVerifiedAt: now }))! : inserted;
        await externalIdentitiesRepository.insert(tx, user.id, profile, now);
        const asUser = actingAs(ctx, user);
        await audit.record(tx, asUser, AuditAction.externalRegister, { resourceType: "user", resourceId: user.id, metadata: { provider: profile.provider, email_verified: profile.emailVerified } });
        await orgs.createPersonal(tx, asUser, user);
        if (!profile.emailVerified) await accounts.sendVerification(tx, user);
        return user;
      });
    } catch (e) {
      // The same identity or address registered concurrently: answer as the winner would be answered.
      if (isUniqueViolation(e, "users_email_live_uq")) throw OAuthErrors.accountExists(label);
      if (isUniqueViolation(e, "external_identities_subject_uq")) throw OAuthErrors.invalidState();
      throw e;
    }
  }

  /**
   * Links the identity to the signed-in account that started the flow. A different email is
   * accepted only when the provider lists the account's address as verified for this identity.
   */
  private async link(ctx: RequestContext, flow: OAuthFlow, profile: ExternalProfile): Promise<CallbackOutcome> {
    const { db, clock, audit } = this.deps;
    const label = PROVIDER_LABEL[profile.provider];
    const user = flow.userId ? await usersRepository.findById(db, flow.userId) : undefined;
    if (!user) throw OAuthErrors.accountUnavailable();
    if (user.status !== "active") throw new AppError("ACCOUNT_SUSPENDED", 403, "This account is suspended. Contact your administrator.");
    const asUser = actingAs(ctx, user);
    const existing = await externalIdentitiesRepository.findBySubject(db, profile.provider, profile.subject);
    // Already linked to this account: nothing to do.
    if (existing?.userId === user.id) return { redirectTo: this.landing(flow, profile.provider, { kind: "linked" }) };
    // One identity, one account.
    if (existing) throw OAuthErrors.identityTaken(label);
    // Stops linking someone else's identity: the account's address must be this identity's, verified.
    if (!this.emailAuthorizes(user.email, profile)) throw OAuthErrors.emailMismatch(label, user.email);
    try {
      await db.transaction(async (tx) => {
        await externalIdentitiesRepository.insert(tx, user.id, profile, clock.now());
        await audit.record(tx, asUser, AuditAction.externalLinked, { metadata: { provider: profile.provider, subject: profile.subject, email: profile.email } });
      });
    } catch (e) {
      if (isUniqueViolation(e, "external_identities_user_provider_uq")) throw OAuthErrors.providerAlreadyLinked(label);
      if (isUniqueViolation(e, "external_identities_subject_uq")) throw OAuthErrors.identityTaken(label);
      throw e;
    }
    return { redirectTo: this.landing(flow, profile.provider, { kind: "linked" }) };
  }

  private emailAuthorizes(accountEmail: string, profile: ExternalProfile): boolean {
    const mine = normalizeEmail(accountEmail);
    if (profile.email && normalizeEmail(profile.email) === mine) return true;
    return profile.verifiedEmails.some((e) => normalizeEmail(e) === mine);
  }

  private mfaOutcome(flow: OAuthFlow, provider: ProviderName, challenge: MfaChallenge): CallbackOutcome {
    return {
      mfa: { token: challenge.mfaToken, expiresAt: challenge.expiresAt },
      redirectTo: this.landing(flow, provider, { kind: "mfa", methods: challenge.methods }),
    };
  }

  private landing(flow: OAuthFlow | null, provider: ProviderName, landing: Landing): string {
    return landingUrl(this.deps.config, { provider, flow: flow?.flow ?? null, next: flow?.next ?? null }, landing);
  }

  private upstream(name: ProviderName, e: unknown): AppError {
    if (isAppError(e)) return e;
    this.deps.logger.warn({ err: e instanceof IdpError ? e.detail ?? e.message : e, provider: name }, "identity provider call failed");
    return OAuthErrors.providerError(PROVIDER_LABEL[name], e instanceof IdpError ? e.reason : "unexpected response");
  }
}
