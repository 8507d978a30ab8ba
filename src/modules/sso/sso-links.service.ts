import type { Db, Executor } from "../../infra/db.js";
import { emailDomain } from "../../lib/domain-names.js";
import { isAppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId } from "../../lib/validation.js";
import { getActiveMemberships, requirePersonalUser } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { SsoIdentityView } from "../external-auth/index.js";
import { userAccounts } from "../users/index.js";
import { ssoConnectionsRepository } from "./sso-connections.repository.js";
import { ssoIdentitiesRepository as identities } from "./sso-identities.repository.js";
import { SsoErrors } from "./sso.errors.js";

/** An organization's connection as its members see it: never its configuration. */
export interface MemberSsoConnectionView {
  id: string;
  name: string;
  kind: "oidc" | "saml";
  organization: { id: string; name: string; slug: string };
  linked: boolean;
  linkedAt: Date | null;
}

/** Why unlinking an identity is refused: the organization manages the account, or requires SSO for its address. */
export type SsoUnlinkBlock = SsoIdentityView["unlinkBlockedBy"];

/** Other ways into the account besides SSO identities (password, passkeys, GitHub/Google): a port, wired in src/container.ts. */
export interface SignInMethodsPort {
  countBesidesSso(db: Executor, userId: string): Promise<number>;
}

export interface SsoLinksDeps {
  db: Db;
  audit: AuditService;
  signInMethods: SignInMethodsPort;
}

/** What decides whether each identity may be unlinked: the account's manager and the SSO requirement on its address. */
async function blockers(db: Executor, user: { managedByOrganizationId: string | null; email: string }) {
  const domain = emailDomain(user.email);
  const requiring = domain ? await ssoConnectionsRepository.findRequiringForDomain(db, domain) : undefined;
  return (organizationId: string): SsoUnlinkBlock => {
    // The organization created the account through its provider: the identity is the account's way in.
    if (user.managedByOrganizationId === organizationId) return "managed";
    // The organization requires SSO for this address: without the identity the person is locked out.
    if (requiring?.organizationId === organizationId) return "sso_required";
    return null;
  };
}

/**
 * A person's own SSO identities, listed with their other linked accounts (the external-auth
 * module's linked-accounts screen asks through a port, src/container.ts), in at most three statements.
 */
export async function listSsoIdentitiesOf(db: Executor, userId: string): Promise<SsoIdentityView[]> {
  const user = await userAccounts.find(db, userId);
  if (!user) return [];
  const rows = await identities.listLinkedOfUser(db, userId);
  if (rows.length === 0) return [];
  const blockedBy = await blockers(db, user);
  return rows.map((r) => ({
    id: r.id,
    connectionId: r.connectionId,
    connectionName: r.connectionName,
    kind: r.kind === "saml" ? "saml" : "oidc",
    organization: { id: r.organizationId, name: r.organizationName, slug: r.organizationSlug },
    email: r.email,
    linkedAt: r.linkedAt,
    lastUsedAt: r.lastUsedAt,
    unlinkBlockedBy: blockedBy(r.organizationId),
  }));
}

/**
 * The member's side of enterprise sign-in (issue 35): which of their organizations' connections
 * they can link their account to, and unlinking an identity of theirs when that cannot lock them out.
 */
export class SsoLinksService {
  constructor(private readonly deps: SsoLinksDeps) {}

  /** The enabled connections of every organization the caller is a member of (any role), and whether they are linked. */
  async listMyConnections(ctx: RequestContext): Promise<MemberSsoConnectionView[]> {
    const actor = requirePersonalUser(ctx);
    const memberships = await getActiveMemberships(this.deps.db, actor.userId);
    const orgs = new Map(memberships.map((m) => [m.organizationId, { id: m.organizationId, name: m.organizationName, slug: m.organizationSlug }]));
    const rows = await ssoConnectionsRepository.listEnabledForMember(this.deps.db, [...orgs.keys()], actor.userId);
    return rows.map((r) => ({ id: r.id, name: r.name, kind: r.kind === "saml" ? "saml" : "oidc", organization: orgs.get(r.organizationId)!, linked: r.linkedAt !== null, linkedAt: r.linkedAt }));
  }

  /** Unlinks one of the caller's own identities; another person's is reported as not found. */
  async unlinkMine(ctx: RequestContext, identityId: unknown): Promise<void> {
    const actor = requirePersonalUser(ctx);
    const id = parseId(identityId, SsoErrors.identityNotFound);
    const { db, audit } = this.deps;
    let organizationId: string | null = null;
    try {
      await db.transaction(async (tx) => {
        // One change to the account's ways in at a time: concurrent unlinks see each other's result.
        if (!(await userAccounts.lock(tx, actor.userId))) throw SsoErrors.identityNotFound();
        const user = await userAccounts.find(tx, actor.userId);
        const identity = (await identities.listLinkedOfUser(tx, actor.userId)).find((r) => r.id === id);
        // Unknown, already unlinked, or someone else's: all alike.
        if (!user || !identity) throw SsoErrors.identityNotFound();
        organizationId = identity.organizationId;
        const blocked = (await blockers(tx, user))(identity.organizationId);
        if (blocked === "managed") throw SsoErrors.unlinkManaged();
        if (blocked === "sso_required") throw SsoErrors.unlinkRequired();
        // Would leave no way in: no password, passkey, GitHub/Google identity or other usable SSO identity.
        if ((await identities.countOtherUsable(tx, actor.userId, id)) === 0 && (await this.deps.signInMethods.countBesidesSso(tx, actor.userId)) === 0) {
          throw SsoErrors.lastSignInMethod();
        }
        await identities.deleteOfUser(tx, actor.userId, id);
        await audit.record(tx, ctx, AuditAction.ssoUnlinked, {
          organizationId: identity.organizationId,
          resourceType: "sso_identity",
          resourceId: identity.id,
          metadata: { connectionId: identity.connectionId, connectionName: identity.connectionName },
        });
      });
    } catch (e) {
      // A refusal is a security event too (not a lookup that found nothing).
      if (isAppError(e) && e.code !== "SSO_IDENTITY_NOT_FOUND") {
        await audit.record(db, ctx, AuditAction.ssoUnlinked, { organizationId, success: false, errorMessage: e.message, metadata: { identityId: id, code: e.code } });
      }
      throw e;
    }
  }
}
