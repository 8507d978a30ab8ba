import type { Executor } from "../../infra/db.js";
import { isUniqueViolation } from "../../infra/db-errors.js";
import type { Logger } from "../../infra/logger.js";
import { emailDomain } from "../../lib/domain-names.js";
import { AppError, isAppError } from "../../lib/errors.js";
import { actingAs, type RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { AuditAction } from "../audit/index.js";
import type { CredentialsService, SessionIssued, SessionIssuer } from "../auth/index.js";
import type { DomainsService } from "../domains/index.js";
import type { CoreDeps } from "../module-deps.js";
import { applyFederatedMembership } from "../orgs/index.js";
import { userAccounts, type UserRow } from "../users/index.js";
import type { ConnectionRow } from "./sso-connections.repository.js";
import type { SsoFlow, SsoFlowRefusal } from "./sso-flow.store.js";
import { ssoIdentitiesRepository as identities } from "./sso-identities.repository.js";
import { grantFor } from "./group-mapping.js";
import { randomToken } from "../../lib/crypto/index.js";
import type { SsoLinkConsent } from "./sso-link-consent.js";
import type { IdpSession } from "./sso-sessions.store.js";
import { SsoErrors } from "./sso.errors.js";

/** A same-origin path to land on after sign-in (the rule /login applies): one "/", never "//" or a backslash. */
export const safeNext = (v: string | null | undefined): string | null => (typeof v === "string" && v.length <= 1024 && /^\/(?!\/)[^\s\\]*$/.test(v) ? v : null);

/** What a connection's identity provider says about the person, whatever the protocol. */
export interface FederatedClaims {
  /** The stable key of the person at this connection (OIDC `sub`; SAML: see docs/enterprise-sign-in.md). */
  subject: string;
  email: string | null;
  name: string | null;
  groups: string[];
}

export interface SsoCallbackOutcome {
  redirectTo: string;
  session?: SessionIssued;
  /** A pending link was stored: the value of the browser's binding cookie for it. */
  linkBinding?: string;
}

/** What the flow carried into the answer: where the sign-in goes afterwards, and the IdP's session (for single logout). */
export interface SignInOptions {
  next?: string | null;
  idpSession?: IdpSession;
}

/** What a failed sign-in learned before it failed (for its audit record). */
export interface Trace {
  flow: Pick<SsoFlow, "connectionId" | "flow" | "userId"> | null;
  connection: ConnectionRow | null;
  userId: string | null;
  subject: string | null;
  refusal: SsoFlowRefusal | "replay" | null;
}

export const newTrace = (): Trace => ({ flow: null, connection: null, userId: null, subject: null, refusal: null });

export interface SsoIdentityDeps extends CoreDeps {
  logger: Logger;
  domains: Pick<DomainsService, "findVerifiedOrganizationForEmail">;
  credentials: Pick<CredentialsService, "createAccount">;
  issuer: SessionIssuer;
  links: SsoLinkConsent;
  config: { publicUrl: string; appUrl: string };
}

/** A race we lost to a concurrent first sign-in of the same person: retried as a returning one. */
class LostRace extends Error {}

/** The address belongs to an existing account not linked to this connection: its holder must confirm. */
class LinkPending extends Error {
  constructor(
    readonly user: UserRow,
    readonly email: string,
  ) {
    super("link pending");
  }
}

/**
 * The person behind a verified answer of a connection's identity provider, the same for OpenID
 * Connect and SAML: a known identity signs in; a new person in the organization's verified domains
 * gets an account the organization manages (just in time); an existing account is never linked
 * without its holder signing in first. The provider's authentication stands in for Keyward's
 * second factor. Groups map to role and departments at each sign-in.
 */
export class SsoIdentityService {
  constructor(private readonly deps: SsoIdentityDeps) {}

  async signIn(ctx: RequestContext, connection: ConnectionRow, claims: FederatedClaims, trace: Trace, opts: SignInOptions = {}, retried = false): Promise<SsoCallbackOutcome> {
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
        ({ user, created } = await this.provision(ctx, connection, claims));
      } catch (e) {
        // The same person's first sign-in ran concurrently and won: sign in as a returning person.
        if (!retried && (e instanceof LostRace || isUniqueViolation(e, "sso_identities_subject_uq"))) return this.signIn(ctx, connection, claims, trace, opts, true);
        if (e instanceof LinkPending) return this.pendLink(ctx, connection, claims, e, trace, opts);
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
          metadata: { connectionId: connection.id, connectionName: connection.name, kind: connection.kind, subject: claims.subject, newAccount: created, role: applied.role, groups: claims.groups.slice(0, 50) },
        });
      },
      undefined,
      connection.sessionMaxAgeSeconds,
    );
    return { session, redirectTo: this.landing("login", { ok: true }, opts.next) };
  }

  /**
   * An existing account, not linked yet: nothing is linked now. The browser goes to the sign-in
   * page with a pending link, which its holder confirms by signing in as they do now (the only
   * sign-in SSO_REQUIRED then lets through, and only for this account and this browser).
   */
  private async pendLink(ctx: RequestContext, connection: ConnectionRow, claims: FederatedClaims, found: LinkPending, trace: Trace, opts: SignInOptions): Promise<SsoCallbackOutcome> {
    const { user, email } = found;
    trace.userId = user.id;
    if (user.status === "suspended") throw SsoErrors.accountSuspended();
    if (user.status !== "active") throw SsoErrors.accountUnavailable();
    const binding = randomToken(32);
    const id = await this.deps.links.create(
      {
        connectionId: connection.id,
        organizationId: connection.organizationId,
        subject: claims.subject,
        email,
        groups: claims.groups.slice(0, 200),
        userId: user.id,
        next: opts.next ?? null,
        ...(opts.idpSession ? { idpSession: opts.idpSession } : {}),
      },
      binding,
    );
    await this.deps.audit.record(this.deps.db, ctx, AuditAction.ssoLinkPending, {
      userId: user.id,
      organizationId: connection.organizationId,
      metadata: { connectionId: connection.id, connectionName: connection.name, kind: connection.kind, subject: claims.subject },
    });
    const url = new URL("/login", this.deps.config.publicUrl);
    url.searchParams.set("sso_link", id);
    url.searchParams.set("email", email);
    if (opts.next) url.searchParams.set("next", opts.next);
    return { redirectTo: url.toString(), linkBinding: binding };
  }

  /**
   * Just-in-time account: only for an address in one of the organization's verified domains (the
   * provider vouches only for its own domains), and never over an existing account.
   */
  private async provision(ctx: RequestContext, connection: ConnectionRow, claims: FederatedClaims): Promise<{ user: UserRow; created: boolean }> {
    const { db, clock } = this.deps;
    if (!claims.email) throw SsoErrors.emailRequired();
    const email = normalizeEmail(claims.email);
    if (!emailDomain(email) || (await this.deps.domains.findVerifiedOrganizationForEmail(email)) !== connection.organizationId) throw SsoErrors.emailNotAllowed();
    const existing = await userAccounts.findByEmail(db, email);
    if (existing) {
      if (await identities.findBySubject(db, connection.id, claims.subject)) throw new LostRace();
      // The organization made this account (SCIM or an admin; rule 16): its own provider speaks for it.
      if (existing.managedByOrganizationId === connection.organizationId) return { user: await this.adopt(ctx, connection, claims, existing, email), created: false };
      // Never merged silently: its holder confirms by signing in as they do now (a pending link).
      throw new LinkPending(existing, email);
    }
    const user = await db.transaction(async (tx) => {
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
        metadata: { connectionId: connection.id, kind: connection.kind, subject: claims.subject },
      });
      return user;
    });
    return { user, created: true };
  }

  /**
   * Links the identity to an account the connection's own organization manages (provisioned by its
   * SCIM client, say): no consent step, as that organization already decides for the account.
   */
  private async adopt(ctx: RequestContext, connection: ConnectionRow, claims: FederatedClaims, user: UserRow, email: string): Promise<UserRow> {
    await this.deps.db.transaction(async (tx) => {
      await identities.insert(tx, { connectionId: connection.id, subject: claims.subject, userId: user.id, email, now: this.deps.clock.now() }).catch((e: unknown) => {
        // Already linked to another identity of this provider: not taken over by a second one.
        throw isUniqueViolation(e, "sso_identities_user_uq") ? SsoErrors.identityTaken() : e;
      });
      await this.deps.audit.record(tx, actingAs(ctx, user), AuditAction.ssoLinked, {
        organizationId: connection.organizationId,
        metadata: { connectionId: connection.id, connectionName: connection.name, subject: claims.subject, managedByOrganization: true },
      });
    });
    return user;
  }

  /** Links the identity to the account that started the flow, if the provider vouches for that account's address. */
  async link(ctx: RequestContext, connection: ConnectionRow, flow: Pick<SsoFlow, "userId">, claims: FederatedClaims, trace: Trace): Promise<SsoCallbackOutcome> {
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

  /** Every failure is audited (with what was learned of the flow) and lands on a page that can show it. */
  async failed(ctx: RequestContext, trace: Trace, e: unknown): Promise<SsoCallbackOutcome> {
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

  landing(kind: SsoFlow["flow"], result: { ok: true } | { error: AppError }, next?: string | null): string {
    const { publicUrl, appUrl } = this.deps.config;
    if ("ok" in result && kind === "login" && next && safeNext(next)) return new URL(next, publicUrl).toString();
    if ("ok" in result) return kind === "link" ? new URL("/account?linked=sso", appUrl).toString() : new URL("/", appUrl).toString();
    const url = new URL(kind === "link" ? "/account" : "/login", kind === "link" ? appUrl : publicUrl);
    url.searchParams.set("error", result.error.message);
    url.searchParams.set("error_type", result.error.code);
    return url.toString();
  }
}
