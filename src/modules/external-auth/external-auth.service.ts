import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { isUniqueViolation, uniqueOr } from "../../infra/db-errors.js";
import type { Logger } from "../../infra/logger.js";
import { pkceChallenge, randomToken } from "../../lib/crypto/index.js";
import { AppError, isAppError } from "../../lib/errors.js";
import { actingAs, type RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { type CredentialsService, type SsoRequirementPort, startMfaChallenge, type MfaChallenge, type PendingLoginStore, type SessionIssued, type SessionIssuer } from "../auth/index.js";
import type { OrgsService } from "../orgs/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { userAccounts, type UserRow } from "../users/index.js";
import { externalIdentitiesRepository } from "./external-identities.repository.js";
import type { FlowRefusal, OAuthFlow, OAuthFlowStore } from "./oauth-flow.store.js";
import { ExternalAuthErrors } from "./external-auth.errors.js";
import type { OAuthProvidersService } from "./oauth-providers.service.js";
import { authorizeQuerySchema, callbackQuerySchema, PROVIDER_LABEL, type ProviderName, type AuthorizeQueryInput, type CallbackQueryInput } from "./external-auth.schemas.js";
import { IdpError, type ExternalProfile } from "./providers/idp.types.js";
import { landingUrl, type Landing } from "./oauth-landing.js";
import { requirePersonalUser } from "../access/index.js";

export interface ExternalAuthDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  audit: AuditService;
  credentials: Pick<CredentialsService, "createAccount">;
  limits: RateLimitService;
  providers: OAuthProvidersService;
  flows: OAuthFlowStore;
  issuer: SessionIssuer;
  pending: PendingLoginStore;
  orgs: OrgsService;
  ssoRequirement?: SsoRequirementPort;
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

interface Trace {
  flow: OAuthFlow | null;
  userId: string | null;
  subject: string | null;
  refusal: FlowRefusal | null;
}

/**
 * Sign-in, registration and account linking with GitHub and Google. The callback address is ours
 * alone; state, PKCE verifier and nonce never leave the server; an identity is found by the
 * provider's subject, never by its email.
 */
export class ExternalAuthService {
  constructor(private readonly deps: ExternalAuthDeps) {}

  /** Starts a flow: the URL to send the browser to at the provider. */
  async start(ctx: RequestContext, provider: unknown, input: AuthorizeQueryInput, binding: string | undefined): Promise<FlowStarted> {
    const { limits, providers, flows, audit, db, config } = this.deps;
    const name = providers.parseProvider(provider);
    // Codes go only to the configured callback: a caller-chosen redirect is refused, not ignored.
    const raw = (input ?? {}) as Record<string, unknown>;
    if (raw.redirectUri !== undefined || raw.redirectUrl !== undefined) throw ExternalAuthErrors.redirectUriRefused();
    await limits.consume("oauth", config.rate, ctx.ip ?? "unknown");
    const q = parseInput(authorizeQuerySchema, input);
    const userId = q.flow === "link" ? requirePersonalUser(ctx).userId : null;
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

  /** Starts linking a provider to the signed-in account. */
  startLink(ctx: RequestContext, provider: unknown, input: Omit<AuthorizeQueryInput, "flow">, binding: string | undefined): Promise<FlowStarted> {
    return this.start(ctx, provider, { ...input, flow: "link" }, binding);
  }

  /**
   * The provider sent the browser back. Whatever happens, the answer is a redirect: to the page
   * the flow asked for, with a session, a pending second factor, or an error the page can show.
   */
  async complete(ctx: RequestContext, provider: unknown, query: CallbackQueryInput, binding: string | undefined): Promise<CallbackOutcome> {
    const name = this.deps.providers.parseProvider(provider);
    // What the failure audit can say about who and what this was, filled in as it is learned.
    const trace: Trace = { flow: null, userId: null, subject: null, refusal: null };
    try {
      await this.deps.limits.consume("oauth", this.deps.config.rate, ctx.ip ?? "unknown");
      const q = parseInput(callbackQuerySchema, query);
      const taken = q.state ? await this.deps.flows.take(q.state, name, binding) : { refused: "unknown_or_used" as const };
      trace.flow = taken.flow ?? null;
      trace.userId = taken.flow?.userId ?? null;
      if ("refused" in taken) {
        trace.refusal = taken.refused;
        throw ExternalAuthErrors.invalidState();
      }
      const flow = taken.flow;
      // The person declined (or the provider refused) at the provider.
      if (q.error) throw q.error === "access_denied" ? ExternalAuthErrors.cancelled(PROVIDER_LABEL[name]) : ExternalAuthErrors.providerError(PROVIDER_LABEL[name], q.error);
      if (!q.code) throw ExternalAuthErrors.invalidState();
      const profile = await this.exchange(name, flow, q);
      trace.subject = profile.subject;
      if (flow.flow === "link") return await this.link(ctx, flow, profile);
      return await this.signIn(ctx, flow, profile, trace);
    } catch (e) {
      const error = isAppError(e) ? e : new AppError("INTERNAL_ERROR", 500, "The sign-in could not be completed. Try again.");
      if (!isAppError(e)) this.deps.logger.error({ err: e, provider: name }, "external sign-in failed unexpectedly");
      await this.recordFailure(ctx, name, trace, error);
      return { redirectTo: this.landing(trace.flow, name, { kind: "error", code: error.code, message: error.message }) };
    }
  }

  private async recordFailure(ctx: RequestContext, name: ProviderName, trace: Trace, error: AppError): Promise<void> {
    const action = trace.flow?.flow === "link" ? AuditAction.externalLinkFailed : AuditAction.externalLoginFailed;
    // The browser still gets its answer if the audit write fails; the log keeps the event.
    await this.deps.audit
      .record(this.deps.db, ctx, action, {
        userId: trace.userId,
        success: false,
        errorMessage: error.message,
        metadata: { provider: name, flow: trace.flow?.flow ?? null, code: error.code, subject: trace.subject, refusal: trace.refusal },
      })
      .catch((err: unknown) => this.deps.logger.error({ err, provider: name, code: error.code }, "could not audit a failed external sign-in"));
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

  /** Login and register: a linked identity signs in; an unknown one with an unused, verified email gets an account. */
  private async signIn(ctx: RequestContext, flow: OAuthFlow, profile: ExternalProfile, trace: Trace, retried = false): Promise<CallbackOutcome> {
    const { db, clock, issuer, audit } = this.deps;
    const label = PROVIDER_LABEL[profile.provider];
    let identity = await externalIdentitiesRepository.findBySubject(db, profile.provider, profile.subject);
    let user: UserRow | undefined;
    if (identity) {
      trace.userId = identity.userId;
      user = await userAccounts.find(db, identity.userId);
      // The account behind it was deleted: the identity is free again, as for someone new.
      if (!user) {
        await externalIdentitiesRepository.deleteById(db, identity.id);
        identity = undefined;
      }
    }
    if (identity && user) {
      // Suspension (or an account not yet activated) blocks every way in.
      if (user.status === "suspended") throw ExternalAuthErrors.accountSuspended();
      if (user.status !== "active") throw ExternalAuthErrors.accountUnavailable();
      await this.refuseIfSsoRequired(ctx, user.email, profile.provider);
      await externalIdentitiesRepository.touch(db, identity.id, profile, clock.now());
    } else {
      if (profile.email) await this.refuseIfSsoRequired(ctx, profile.email, profile.provider);
      try {
        user = await this.register(ctx, profile, label);
      } catch (e) {
        // The same identity registered concurrently (a double-clicked callback): sign it in.
        if (!retried && isUniqueViolation(e, "external_identities_subject_uq")) return this.signIn(ctx, flow, profile, trace, true);
        throw e;
      }
      trace.userId = user.id;
    }
    const signedIn = user;
    const method = profile.provider;
    const challenge = await startMfaChallenge(this.deps, ctx, signedIn, { rememberMe: false, method });
    const loginAudit = (result: string) => ({ metadata: { provider: profile.provider, subject: profile.subject, new_account: !identity, result } });
    if (challenge) {
      await audit.record(db, actingAs(ctx, signedIn), AuditAction.externalLogin, loginAudit("mfa_required"));
      return this.mfaOutcome(flow, profile.provider, challenge);
    }
    const session = await issuer.issue(ctx, signedIn, false, method, (tx) => audit.record(tx, actingAs(ctx, signedIn), AuditAction.externalLogin, loginAudit("session")));
    return { session, redirectTo: this.landing(flow, profile.provider, { kind: "session" }) };
  }

  /**
   * First sign-in with an unknown identity: a new account and a personal organization, in one
   * transaction. Only an address the provider has verified can create an account (otherwise anyone
   * could claim someone's address before they register), and an address that already has an
   * account is never merged silently: its owner must sign in and link.
   */
  private async register(ctx: RequestContext, profile: ExternalProfile, label: string): Promise<UserRow> {
    const { db, clock, audit, credentials, orgs } = this.deps;
    if (!profile.email) throw ExternalAuthErrors.emailRequired(label);
    if (!profile.emailVerified) throw ExternalAuthErrors.emailUnverified(label);
    const email = normalizeEmail(profile.email);
    return db.transaction(async (tx) => {
      const accountExists = () => ExternalAuthErrors.accountExists(label);
      if (await userAccounts.findByEmail(tx, email)) throw accountExists();
      // The same address registered concurrently: answered as the winner would be answered.
      const user = await credentials.createAccount(tx, { email, fullName: profile.displayName?.slice(0, 255) ?? null, verifiedVia: "provider" }, { emailTaken: accountExists });
      await externalIdentitiesRepository.insert(tx, user.id, profile, clock.now());
      const asUser = actingAs(ctx, user);
      await audit.record(tx, asUser, AuditAction.externalRegister, { resourceType: "user", resourceId: user.id, metadata: { provider: profile.provider, subject: profile.subject } });
      await orgs.createPersonal(tx, asUser, user);
      return user;
    });
  }

  /**
   * Links the identity to the signed-in account that started the flow. The provider must vouch
   * for the account's address: as this identity's verified email, or in its list of verified ones.
   */
  private async link(ctx: RequestContext, flow: OAuthFlow, profile: ExternalProfile): Promise<CallbackOutcome> {
    const { db, clock, audit } = this.deps;
    const label = PROVIDER_LABEL[profile.provider];
    // The browser now belongs to someone else (they signed in since the flow started).
    if (ctx.actor.kind === "user" && ctx.actor.userId !== flow.userId) throw ExternalAuthErrors.otherUserSignedIn();
    const user = flow.userId ? await userAccounts.find(db, flow.userId) : undefined;
    if (!user) throw ExternalAuthErrors.accountUnavailable();
    if (user.status === "suspended") throw ExternalAuthErrors.accountSuspended();
    const asUser = actingAs(ctx, user);
    const existing = await externalIdentitiesRepository.findBySubject(db, profile.provider, profile.subject);
    // Already linked to this account: nothing to do.
    if (existing?.userId === user.id) return { redirectTo: this.landing(flow, profile.provider, { kind: "linked" }) };
    // One identity, one account.
    if (existing) throw ExternalAuthErrors.identityTaken(label);
    // Stops linking someone else's identity, or one that merely claims this address.
    if (!this.emailAuthorizes(user.email, profile)) throw ExternalAuthErrors.emailMismatch(label);
    const insert = () =>
      db.transaction(async (tx) => {
        await externalIdentitiesRepository.insert(tx, user.id, profile, clock.now());
        await audit.record(tx, asUser, AuditAction.externalLinked, { metadata: { provider: profile.provider, subject: profile.subject, email: profile.email } });
      });
    // A concurrent link of this provider to the account, or of this identity to another account.
    await uniqueOr(insert, {
      external_identities_user_provider_uq: () => ExternalAuthErrors.providerAlreadyLinked(label),
      external_identities_subject_uq: () => ExternalAuthErrors.identityTaken(label),
    });
    return { redirectTo: this.landing(flow, profile.provider, { kind: "linked" }) };
  }

  /** Only verified addresses count: an unverified one proves nothing about who holds the mailbox. */
  private emailAuthorizes(accountEmail: string, profile: ExternalProfile): boolean {
    const mine = normalizeEmail(accountEmail);
    if (profile.email && profile.emailVerified && normalizeEmail(profile.email) === mine) return true;
    return profile.verifiedEmails.some((e) => normalizeEmail(e) === mine);
  }

  /** An address whose organization requires SSO signs in only through its identity provider. */
  private async refuseIfSsoRequired(ctx: RequestContext, email: string, provider: ProviderName): Promise<void> {
    const sso = await this.deps.ssoRequirement?.requiredFor(normalizeEmail(email));
    if (!sso) return;
    await this.deps.audit.record(this.deps.db, ctx, AuditAction.ssoRequiredRefused, { organizationId: sso.organizationId, success: false, metadata: { email, method: provider, connectionId: sso.connectionId } });
    throw ExternalAuthErrors.ssoRequired(sso.startUrl);
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
    return ExternalAuthErrors.providerError(PROVIDER_LABEL[name], e instanceof IdpError ? e.reason : "unexpected response");
  }
}
