import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { isUniqueViolation } from "../../infra/db-errors.js";
import type { Logger } from "../../infra/logger.js";
import { pkceChallenge, randomToken, type SecretBox, sealContexts } from "../../lib/crypto/index.js";
import { emailDomain } from "../../lib/domain-names.js";
import { AppError, isAppError } from "../../lib/errors.js";
import { actingAs, type RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { requirePersonalUser } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { CredentialsService, SessionIssued, SessionIssuer } from "../auth/index.js";
import type { DomainsService } from "../domains/index.js";
import { applyFederatedMembership } from "../orgs/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { userAccounts, type UserRow } from "../users/index.js";
import { SsoIdpError, type OidcClaims, type OidcConnectionClient } from "./oidc-connection.client.js";
import { oidcConfigOf } from "./sso-connections.service.js";
import { ssoConnectionsRepository, type ConnectionRow } from "./sso-connections.repository.js";
import { findConnectionSecretPrivileged } from "./sso-connections.secrets.repository.js";
import type { SsoFlow, SsoFlowRefusal, SsoFlowStore } from "./sso-flow.store.js";
import { ssoIdentitiesRepository as identities } from "./sso-identities.repository.js";
import { grantFor } from "./group-mapping.js";
import { SsoErrors } from "./sso.errors.js";
import { ssoCallbackQuerySchema, ssoStartQuerySchema, type SsoCallbackQueryInput, type SsoStartQueryInput } from "./sso.schemas.js";

export interface SsoSignInDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  box: SecretBox;
  audit: AuditService;
  limits: RateLimitService;
  client: OidcConnectionClient;
  flows: SsoFlowStore;
  domains: Pick<DomainsService, "findVerifiedOrganizationForEmail">;
  credentials: Pick<CredentialsService, "createAccount">;
  issuer: SessionIssuer;
  config: { publicUrl: string; appUrl: string; rate: RateRule };
}

export interface SsoFlowStarted {
  authorizationUrl: string;
  /** The browser-binding value to keep in an HttpOnly cookie until the callback. */
  binding: string;
}

export interface SsoCallbackOutcome {
  redirectTo: string;
  session?: SessionIssued;
}

const BINDING = /^[A-Za-z0-9_-]{43}$/;

interface Trace {
  flow: SsoFlow | null;
  connection: ConnectionRow | null;
  userId: string | null;
  subject: string | null;
  refusal: SsoFlowRefusal | null;
}

/** A race we lost to a concurrent first sign-in of the same person: retried as a returning one. */
class LostRace extends Error {}

/**
 * Sign-in through an organization's own OpenID Connect provider (issue 35): home-realm discovery by
 * email, the code flow with state, nonce and PKCE pinned to one connection, then the person: a
 * known identity signs in; a new person in the organization's verified domains gets an account the
 * organization manages (just in time); an existing account is never linked without its holder
 * signing in first. The provider's authentication stands in for Keyward's second factor.
 */
export class SsoSignInService {
  constructor(private readonly deps: SsoSignInDeps) {}

  /**
   * Home-realm discovery. An address whose domain has no enabled connection (unclaimed, claimed but
   * unverified, or verified without a connection) gets one answer, SSO_NOT_AVAILABLE: it reveals
   * only what following a sign-in link would, and never whether an account exists.
   */
  async startByEmail(ctx: RequestContext, input: SsoStartQueryInput, binding: string | undefined): Promise<SsoFlowStarted> {
    await this.deps.limits.consume("sso-start", this.deps.config.rate, ctx.ip ?? "unknown");
    const { email } = parseInput(ssoStartQuerySchema, input);
    const orgId = email ? await this.deps.domains.findVerifiedOrganizationForEmail(normalizeEmail(email)) : null;
    const connection = orgId ? await ssoConnectionsRepository.findEnabledForOrganization(this.deps.db, orgId) : undefined;
    if (!connection) throw SsoErrors.notAvailable();
    return this.begin(connection, "login", null, binding, email);
  }

  async startByConnection(ctx: RequestContext, connectionId: string, binding: string | undefined): Promise<SsoFlowStarted> {
    await this.deps.limits.consume("sso-start", this.deps.config.rate, ctx.ip ?? "unknown");
    const connection = await this.enabledConnection(connectionId);
    return this.begin(connection, "login", null, binding);
  }

  /** Starts linking the signed-in account to its organization's identity provider (its consent). */
  async startLink(ctx: RequestContext, connectionId: string, binding: string | undefined): Promise<SsoFlowStarted> {
    const actor = requirePersonalUser(ctx);
    const connection = await this.enabledConnection(connectionId);
    const started = await this.begin(connection, "link", actor.userId, binding, actor.email);
    await this.deps.audit.record(this.deps.db, ctx, AuditAction.ssoLinkStarted, { organizationId: connection.organizationId, metadata: { connectionId: connection.id, connectionName: connection.name } });
    return started;
  }

  /** The provider sent the browser back: whatever happens, the answer is a redirect. */
  async complete(ctx: RequestContext, query: SsoCallbackQueryInput, binding: string | undefined): Promise<SsoCallbackOutcome> {
    const trace: Trace = { flow: null, connection: null, userId: null, subject: null, refusal: null };
    try {
      await this.deps.limits.consume("sso-start", this.deps.config.rate, ctx.ip ?? "unknown");
      const q = parseInput(ssoCallbackQuerySchema, query);
      const taken = q.state ? await this.deps.flows.take(q.state, binding) : { refused: "unknown_or_used" as const };
      trace.flow = taken.flow ?? null;
      trace.userId = taken.flow?.userId ?? null;
      if ("refused" in taken) {
        trace.refusal = taken.refused;
        throw SsoErrors.invalidState();
      }
      const flow = taken.flow;
      const connection = await ssoConnectionsRepository.findById(this.deps.db, flow.connectionId);
      // Removed or disabled while the person was at the provider.
      if (!connection?.enabled || connection.kind !== "oidc") throw SsoErrors.notAvailable();
      trace.connection = connection;
      if (q.error) throw q.error === "access_denied" ? SsoErrors.cancelled() : SsoErrors.providerError(q.error);
      if (!q.code) throw SsoErrors.invalidState();
      const claims = await this.exchange(connection, flow, q);
      trace.subject = claims.subject;
      if (flow.flow === "link") return await this.link(ctx, connection, flow, claims, trace);
      return await this.signIn(ctx, connection, claims, trace);
    } catch (e) {
      return this.failed(ctx, trace, e);
    }
  }

  /** Every failure is audited (with what was learned of the flow) and lands on a page that can show it. */
  private async failed(ctx: RequestContext, trace: Trace, e: unknown): Promise<SsoCallbackOutcome> {
    const error = isAppError(e) ? e : new AppError("INTERNAL_ERROR", 500, "The sign-in could not be completed. Try again.");
    if (!isAppError(e)) this.deps.logger.error({ err: e }, "SSO sign-in failed unexpectedly");
    const connectionId = trace.connection?.id ?? trace.flow?.connectionId ?? null;
    // The browser still gets its answer if the audit write fails; the log keeps the event.
    await this.deps.audit
      .record(this.deps.db, ctx, AuditAction.ssoLoginFailed, {
        userId: trace.userId,
        organizationId: trace.connection?.organizationId ?? null,
        success: false,
        errorMessage: error.message,
        metadata: { connectionId, flow: trace.flow?.flow ?? null, code: error.code, subject: trace.subject, refusal: trace.refusal },
      })
      .catch((err: unknown) => this.deps.logger.error({ err, code: error.code }, "could not audit a failed SSO sign-in"));
    return { redirectTo: this.landing(trace.flow?.flow ?? "login", { error }) };
  }

  private async enabledConnection(connectionId: string): Promise<ConnectionRow> {
    const id = parseId(connectionId, SsoErrors.notAvailable);
    const connection = await ssoConnectionsRepository.findById(this.deps.db, id);
    // Unknown, removed and disabled connections answer alike.
    if (!connection?.enabled || connection.kind !== "oidc") throw SsoErrors.notAvailable();
    return connection;
  }

  private async begin(connection: ConnectionRow, kind: SsoFlow["flow"], userId: string | null, binding: string | undefined, loginHint?: string): Promise<SsoFlowStarted> {
    const bind = binding && BINDING.test(binding) ? binding : randomToken(32);
    const { state, flow } = await this.deps.flows.create({ connectionId: connection.id, flow: kind, userId }, bind);
    const settings = await this.settings(connection);
    const url = await this.deps.client
      .authorizationUrl(settings, { state, nonce: flow.nonce, codeChallenge: pkceChallenge(flow.codeVerifier), redirectUri: this.callbackUrl(), ...(loginHint ? { loginHint } : {}) })
      .catch((e: unknown) => {
        throw this.upstream(e);
      });
    return { authorizationUrl: url.toString(), binding: bind };
  }

  private callbackUrl(): string {
    return new URL("/sso/oidc/callback", this.deps.config.publicUrl).toString();
  }

  private async settings(connection: ConnectionRow) {
    const sealed = await findConnectionSecretPrivileged(this.deps.db, connection.id);
    const secret = sealed ? this.deps.box.decryptString(sealed, sealContexts.ssoConnectionSecret(connection.id)) : null;
    return { connectionId: connection.id, version: connection.updatedAt.toISOString(), config: oidcConfigOf(connection), secret };
  }

  private async exchange(connection: ConnectionRow, flow: SsoFlow, q: { code?: string; state?: string; iss?: string }): Promise<OidcClaims> {
    const redirectUri = this.callbackUrl();
    const callbackUrl = new URL(redirectUri);
    callbackUrl.search = new URLSearchParams({ code: q.code!, state: q.state!, ...(q.iss ? { iss: q.iss } : {}) }).toString();
    return this.deps.client
      .exchange(await this.settings(connection), { callbackUrl, state: q.state!, nonce: flow.nonce, codeVerifier: flow.codeVerifier, redirectUri })
      .catch((e: unknown) => {
        throw this.upstream(e);
      });
  }

  private async signIn(ctx: RequestContext, connection: ConnectionRow, claims: OidcClaims, trace: Trace, retried = false): Promise<SsoCallbackOutcome> {
    const { db, clock } = this.deps;
    const identity = await identities.findBySubject(db, connection.id, claims.subject);
    let user: UserRow | undefined;
    let created = false;
    if (identity) {
      trace.userId = identity.userId;
      user = await userAccounts.find(db, identity.userId);
      // Deleted accounts stay deleted: a returning identity does not bring one back.
      if (!user) throw SsoErrors.accountUnavailable();
    } else {
      try {
        user = await this.provision(ctx, connection, claims);
        created = true;
      } catch (e) {
        // The same person's first sign-in ran concurrently and won: sign in as a returning person.
        if (!retried && (e instanceof LostRace || isUniqueViolation(e, "sso_identities_subject_uq"))) return this.signIn(ctx, connection, claims, trace, true);
        throw e;
      }
      trace.userId = user.id;
    }
    // Suspension (or an account not yet activated) blocks every way in.
    if (user.status === "suspended") throw SsoErrors.accountSuspended();
    if (user.status !== "active") throw SsoErrors.accountUnavailable();
    const signedIn = user;
    const grant = grantFor(connection, claims.groups);
    const session = await this.deps.issuer.issue(
      ctx,
      signedIn,
      false,
      "sso",
      async (tx) => {
        const now = clock.now();
        if (identity) await identities.touch(tx, identity.id, claims.email, now);
        const applied = await applyFederatedMembership(tx, { organizationId: connection.organizationId, userId: signedIn.id, ...grant, now });
        const asUser = actingAs(ctx, signedIn);
        if (!created && (applied.joined || applied.role !== applied.previousRole || applied.departmentsAdded.length > 0 || applied.departmentsRemoved.length > 0)) {
          await this.deps.audit.record(tx, asUser, AuditAction.ssoMembershipSynced, { organizationId: connection.organizationId, resourceType: "user", resourceId: signedIn.id, metadata: { connectionId: connection.id, ...applied } });
        }
        await this.deps.audit.record(tx, asUser, AuditAction.ssoLogin, {
          organizationId: connection.organizationId,
          metadata: { connectionId: connection.id, connectionName: connection.name, subject: claims.subject, newAccount: created, role: applied.role, groups: claims.groups.slice(0, 50) },
        });
      },
      undefined,
      connection.sessionMaxAgeSeconds,
    );
    return { session, redirectTo: this.landing("login", { ok: true }) };
  }

  /**
   * Just-in-time account: only for an address in one of the organization's verified domains (the
   * provider vouches only for its own domains), and never over an existing account.
   */
  private async provision(ctx: RequestContext, connection: ConnectionRow, claims: OidcClaims): Promise<UserRow> {
    const { db, clock } = this.deps;
    if (!claims.email) throw SsoErrors.emailRequired();
    const email = normalizeEmail(claims.email);
    if (!emailDomain(email) || (await this.deps.domains.findVerifiedOrganizationForEmail(email)) !== connection.organizationId) throw SsoErrors.emailNotAllowed();
    // Never merged silently: its holder signs in as they do now and links from their settings.
    if (await userAccounts.findByEmail(db, email)) {
      if (await identities.findBySubject(db, connection.id, claims.subject)) throw new LostRace();
      throw SsoErrors.linkRequired();
    }
    return db.transaction(async (tx) => {
      const user = await this.deps.credentials.createAccount(
        tx,
        { email, fullName: claims.name?.slice(0, 255) ?? null, managedBy: connection.organizationId, verifiedVia: "provider" },
        { emailTaken: () => new LostRace() },
      );
      await identities.insert(tx, { connectionId: connection.id, subject: claims.subject, userId: user.id, email, now: clock.now() });
      await this.deps.audit.record(tx, actingAs(ctx, user), AuditAction.ssoJitProvisioned, {
        organizationId: connection.organizationId,
        resourceType: "user",
        resourceId: user.id,
        metadata: { connectionId: connection.id, subject: claims.subject },
      });
      return user;
    });
  }

  /** Links the identity to the account that started the flow, if the provider vouches for that account's address. */
  private async link(ctx: RequestContext, connection: ConnectionRow, flow: SsoFlow, claims: OidcClaims, trace: Trace): Promise<SsoCallbackOutcome> {
    const { db, clock } = this.deps;
    // The browser now belongs to someone else (they signed in since the flow started).
    if (ctx.actor.kind === "user" && ctx.actor.userId !== flow.userId) throw SsoErrors.otherUserSignedIn();
    const user = flow.userId ? await userAccounts.find(db, flow.userId) : undefined;
    if (!user) throw SsoErrors.accountUnavailable();
    if (user.status === "suspended") throw SsoErrors.accountSuspended();
    trace.userId = user.id;
    const existing = await identities.findBySubject(db, connection.id, claims.subject);
    if (existing && existing.userId !== user.id) throw SsoErrors.identityTaken();
    if (!existing) {
      // Stops linking someone else's identity to this account.
      if (!claims.email || normalizeEmail(claims.email) !== normalizeEmail(user.email)) throw SsoErrors.emailMismatch();
      const grant = grantFor(connection, claims.groups);
      await db
        .transaction(async (tx: Executor) => {
          const now = clock.now();
          await identities.insert(tx, { connectionId: connection.id, subject: claims.subject, userId: user.id, email: normalizeEmail(claims.email!), now });
          const applied = await applyFederatedMembership(tx, { organizationId: connection.organizationId, userId: user.id, ...grant, now });
          await this.deps.audit.record(tx, actingAs(ctx, user), AuditAction.ssoLinked, {
            organizationId: connection.organizationId,
            metadata: { connectionId: connection.id, connectionName: connection.name, subject: claims.subject, role: applied.role },
          });
        })
        .catch((e: unknown) => {
          throw isUniqueViolation(e) ? SsoErrors.identityTaken() : e;
        });
    }
    return { redirectTo: this.landing("link", { ok: true }) };
  }

  private landing(kind: SsoFlow["flow"], result: { ok: true } | { error: AppError }): string {
    const { publicUrl, appUrl } = this.deps.config;
    if ("ok" in result) return kind === "link" ? new URL("/account?linked=sso", appUrl).toString() : new URL("/", appUrl).toString();
    const url = new URL(kind === "link" ? "/account" : "/login", kind === "link" ? appUrl : publicUrl);
    url.searchParams.set("error", result.error.message);
    url.searchParams.set("error_type", result.error.code);
    return url.toString();
  }

  private upstream(e: unknown): AppError {
    if (isAppError(e)) return e;
    this.deps.logger.warn({ err: e instanceof SsoIdpError ? (e.detail ?? e.message) : e }, "identity provider call failed");
    return SsoErrors.providerError(e instanceof SsoIdpError ? e.reason : "unexpected response");
  }
}
