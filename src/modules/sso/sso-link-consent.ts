import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { isUniqueViolation } from "../../infra/db-errors.js";
import type { KeyValueStore } from "../../infra/kv.js";
import { randomToken, safeEqual, sha256Hex } from "../../lib/crypto/index.js";
import { AppError } from "../../lib/errors.js";
import { actingAs, type RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { applyFederatedMembership } from "../orgs/index.js";
import type { UserRow } from "../users/index.js";
import { grantFor } from "./group-mapping.js";
import { ssoConnectionsRepository, type ConnectionRow } from "./sso-connections.repository.js";
import { ssoIdentitiesRepository as identities } from "./sso-identities.repository.js";
import { SsoSessionIndex, type IdpSession } from "./sso-sessions.store.js";
import { SsoErrors } from "./sso.errors.js";

/**
 * A link an SSO sign-in found and did not make (issue 35): the provider vouched for an address
 * whose Keyward account is not linked to the connection yet. Its holder confirms with their
 * current method (password with its second step, a passkey, or a mailed link) in the browser that
 * came back from the provider; until then nothing is linked.
 */
export interface PendingLink {
  connectionId: string;
  organizationId: string;
  subject: string;
  /** The verified address, normalized: the account's address when the link was found. */
  email: string;
  groups: string[];
  userId: string;
  /** Where the sign-in goes afterwards (a same-origin path), if it asked for one. */
  next: string | null;
  /**
   * The IdP's session at the sign-in that found the link (SAML NameID, format and SessionIndex;
   * OpenID Connect `sid`): the session the confirmation opens is recorded with it, exactly as a
   * direct SSO sign-in's, so single logout reaches it both ways. Absent in links stored before it was kept.
   */
  idpSession?: IdpSession;
  bindingHash: string;
  createdAt: number;
}

/** A pending link confirmed (inside the sign-in's transaction): what records the session it opens. */
export interface LinkConfirmed {
  /** After the session is issued: records it as one the connection issued (single logout ends it). */
  sessionOpened(sessionId: string): Promise<void>;
}

/** What a sign-in carrying a pending link may do: skip SSO_REQUIRED for this account, and get an SSO session. */
export interface PendingLinkGrant {
  userId: string;
  connectionId: string;
  organizationId: string;
  maxAgeSeconds: number | null;
}

export const linkConfirmationInvalid = () =>
  new AppError("SSO_LINK_INVALID", 400, "This confirmation has expired, was already used or was started in another browser. Sign in through your identity provider again.");

export interface SsoLinkConsentDeps {
  db: Db;
  clock: Clock;
  kv: KeyValueStore;
  audit: AuditService;
  /** Seconds a pending link lives (600), and a mailed confirmation (900). */
  ttl?: number;
  mailTtl?: number;
}

/**
 * Pending links, kept like SSO flows: server-side under the hash of an opaque id, short-lived,
 * single-use, and valid only in the browser whose binding cookie matches. The auth module's
 * password and passkey sign-ins reach it through a port (src/container.ts wires it).
 */
export class SsoLinkConsent {
  readonly ttl: number;
  readonly mailTtl: number;
  private readonly index: SsoSessionIndex;

  constructor(private readonly deps: SsoLinkConsentDeps) {
    this.ttl = deps.ttl ?? 600;
    this.mailTtl = deps.mailTtl ?? 900;
    this.index = new SsoSessionIndex(deps.kv);
  }

  async create(link: Omit<PendingLink, "bindingHash" | "createdAt">, binding: string): Promise<string> {
    const id = randomToken(32);
    const value: PendingLink = { ...link, bindingHash: sha256Hex(binding), createdAt: this.deps.clock.now().getTime() };
    await this.deps.kv.set(this.key(id), JSON.stringify(value), this.ttl);
    return id;
  }

  /** The pending link as this browser may see it; null when unknown, used, expired or another browser's. */
  async peek(id: string | undefined, binding: string | undefined): Promise<PendingLink | null> {
    if (!id || id.length > 128) return null;
    return this.check(await this.deps.kv.get(this.key(id)), binding, this.ttl);
  }

  /**
   * A sign-in for `email` carrying pending link `id` in this browser: what it may do, or null (the
   * sign-in is then treated as if it carried none).
   */
  async pendingFor(id: string | undefined, binding: string | undefined, email: string): Promise<PendingLinkGrant | null> {
    const link = await this.peek(id, binding);
    if (!link || link.email !== normalizeEmail(email)) return null;
    const connection = await ssoConnectionsRepository.findById(this.deps.db, link.connectionId);
    if (!connection?.enabled) return null;
    return { userId: link.userId, connectionId: link.connectionId, organizationId: link.organizationId, maxAgeSeconds: connection.sessionMaxAgeSeconds ?? null };
  }

  /**
   * Uses the pending link up and links the identity to `user`, inside the transaction that records
   * the sign-in (SessionIssuer's): exactly one of any number of racing confirmations links.
   */
  async confirm(tx: Executor, ctx: RequestContext, id: string, binding: string | undefined, user: UserRow, method: string): Promise<LinkConfirmed> {
    // Peeked first so that another browser's attempt does not use the link up.
    if (!(await this.peek(id, binding))) throw linkConfirmationInvalid();
    const link = this.check(await this.deps.kv.take(this.key(id)), binding, this.ttl);
    if (!link) throw linkConfirmationInvalid();
    const connection = await this.apply(tx, ctx, link, user, { method });
    return { sessionOpened: (sessionId) => this.sessionOpened(sessionId, link, connection) };
  }

  /**
   * Records a session a confirmation of `link` opened as one `connection` issued, with the IdP's
   * session the link kept: the same record and lifetime as a direct SSO sign-in's, so Keyward's
   * sign-out goes on to the IdP and the IdP's logout (SAML SLO, back-channel) ends it.
   */
  async sessionOpened(sessionId: string, link: PendingLink, connection: ConnectionRow): Promise<void> {
    // A link stored before the IdP's session was kept (or of another protocol): still the connection's.
    const kind = connection.kind === "saml" ? "saml" : "oidc";
    const idp: IdpSession = link.idpSession?.kind === kind ? link.idpSession : { kind };
    await this.index.issued(sessionId, connection, link.userId, idp);
  }

  /** Moves a pending link to a mailed one-time confirmation (its own TTL): the pending link is used up. */
  async toMail(id: string, binding: string | undefined): Promise<{ token: string; link: PendingLink } | null> {
    if (!(await this.peek(id, binding))) return null;
    const link = this.check(await this.deps.kv.take(this.key(id)), binding, this.ttl);
    if (!link) return null;
    const token = randomToken(32);
    await this.deps.kv.set(this.mailKey(token), JSON.stringify({ ...link, createdAt: this.deps.clock.now().getTime() }), this.mailTtl);
    return { token, link };
  }

  /** Takes a mailed confirmation (single use), in the browser that asked for it. */
  async takeMail(token: string, binding: string | undefined): Promise<PendingLink | null> {
    if (!token || token.length > 128) return null;
    if (!this.check(await this.deps.kv.get(this.mailKey(token)), binding, this.mailTtl)) return null;
    return this.check(await this.deps.kv.take(this.mailKey(token)), binding, this.mailTtl);
  }

  /** The link itself, with SsoIdentityService.link's rules: the address still matches, the identity is nobody else's. */
  async apply(tx: Executor, ctx: RequestContext, link: PendingLink, user: UserRow, how: { method: string }): Promise<ConnectionRow> {
    const connection = await ssoConnectionsRepository.findById(tx, link.connectionId);
    if (!connection?.enabled) throw SsoErrors.notAvailable();
    if (user.id !== link.userId) throw linkConfirmationInvalid();
    if (normalizeEmail(user.email) !== link.email) throw SsoErrors.emailMismatch();
    const existing = await identities.findBySubject(tx, connection.id, link.subject);
    if (existing && existing.userId !== user.id) throw SsoErrors.identityTaken();
    const now = this.deps.clock.now();
    if (!existing) {
      await identities.insert(tx, { connectionId: connection.id, subject: link.subject, userId: user.id, email: link.email, now }).catch((e: unknown) => {
        throw isUniqueViolation(e) ? SsoErrors.identityTaken() : e;
      });
    }
    const applied = await applyFederatedMembership(tx, { organizationId: connection.organizationId, userId: user.id, ...grantFor(connection, link.groups), now });
    const asUser = actingAs(ctx, user);
    await this.deps.audit.record(tx, asUser, AuditAction.ssoLinked, {
      organizationId: connection.organizationId,
      metadata: { connectionId: connection.id, connectionName: connection.name, subject: link.subject, role: applied.role, confirmedAtSignIn: true, method: how.method },
    });
    await this.deps.audit.record(tx, asUser, AuditAction.ssoLogin, {
      organizationId: connection.organizationId,
      metadata: { connectionId: connection.id, connectionName: connection.name, kind: connection.kind, subject: link.subject, newAccount: false, role: applied.role, groups: link.groups.slice(0, 50), linkConfirmedBy: how.method },
    });
    return connection;
  }

  private check(raw: string | null, binding: string | undefined, ttl: number): PendingLink | null {
    if (!raw) return null;
    const link = JSON.parse(raw) as PendingLink;
    if (this.deps.clock.now().getTime() - link.createdAt > ttl * 1000) return null;
    if (!binding || !safeEqual(sha256Hex(binding), link.bindingHash)) return null;
    return link;
  }

  private key(id: string): string {
    return `sso-link:${sha256Hex(id)}`;
  }

  private mailKey(token: string): string {
    return `sso-link-mail:${sha256Hex(token)}`;
  }
}
