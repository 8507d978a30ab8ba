import type { Executor } from "../../infra/db.js";
import type { ApiKeyActor, RequestContext, UserActor } from "../../lib/request-context.js";
import { CommonErrors } from "../../lib/errors.js";
import { parseId } from "../../lib/validation.js";
import { AccessErrors } from "./access.errors.js";
import { requireUser } from "./guards.js";
import { getActiveMembership, type ActiveMembership } from "./memberships.repository.js";
import { isPastMfaDeadline } from "./mfa-standing.repository.js";
import { can, keyCan, scopeGranting, STORED_ROLE_ONLY, type Capability } from "./permissions.js";

export interface OrgAccess {
  actor: UserActor;
  orgId: string;
  membership: ActiveMembership;
}

/** An organization API key inside its own organization: no membership, only its scopes' capabilities. */
export interface KeyOrgAccess {
  actor: ApiKeyActor;
  orgId: string;
  membership: null;
}

/** What `requireOrgCaller` answers: a member (session or delegated token) or the organization's key. */
export type CallerOrgAccess = OrgAccess | KeyOrgAccess;

const DESCRIBE: Partial<Record<Capability, string>> = {
  "org.update": "change the organization",
  "org.delete": "delete the organization",
  "org.transfer": "transfer ownership",
  "members.manage": "manage members",
  "invites.manage": "manage invites",
  "departments.manage": "manage departments",
  "principals.manage": "manage principals",
  "cert_policy.read": "read certificate policies",
  "cert_policy.manage": "change certificate policies",
  "api_keys.manage": "manage API keys",
  "activity.read": "read the organization's activity",
  "users.admin": "administer users",
  "ca.manage": "manage certificate authorities",
  "ssh.sign": "sign certificates",
  "networks.use": "use the organization's networks",
  "networks.manage": "manage the organization's networks",
  "domains.manage": "manage the organization's domains",
  "sso.manage": "manage the organization's single sign-on connections",
};

/** What an OIDC access token acting for a member may exercise (each route also checks its scope). */
const DELEGABLE = new Set<Capability>(["org.read", "members.read", "departments.read", "principals.read", "ssh.sign", "networks.use"]);

/**
 * Tenancy guard for every organization-scoped operation. Guard order: signed in; the id is well
 * formed; the caller is an active member (otherwise the organization "does not exist" for them);
 * their role has the capability.
 */
export async function requireOrgAccess(db: Executor, ctx: RequestContext, orgId: unknown, capability: Capability): Promise<OrgAccess> {
  const actor = requireUser(ctx);
  const id = parseId(orgId, AccessErrors.orgNotFound);
  const membership = await getActiveMembership(db, actor.userId, id);
  // The standing matters only to a member (a non-member is refused first either way).
  const access = checkOrgAccess(actor, id, membership, membership ? await isPastMfaDeadline(db, actor.userId, id) : false, capability);
  // What the caller does here with a temporary role, the audit trail says so (audit.service.ts).
  if (access.membership.elevatedUntil) {
    const m = access.membership;
    ctx.elevation = { organizationId: id, role: m.role, storedRole: m.storedRole, until: m.elevatedUntil!.toISOString() };
  }
  return access;
}

/**
 * The tenancy guard for the operations that also take organization API keys (each declares it by
 * calling this instead of `requireOrgAccess`, which refuses keys). A member is checked exactly as
 * there; a key only in its own organization and for what its scopes grant.
 */
export async function requireOrgCaller(db: Executor, ctx: RequestContext, orgId: unknown, capability: Capability): Promise<CallerOrgAccess> {
  if (ctx.actor.kind !== "apiKey") return requireOrgAccess(db, ctx, orgId, capability);
  return checkKeyOrgAccess(ctx.actor, orgId, capability);
}

/** Guard order for a key: the id is well formed; it is the key's organization; a scope grants the capability. */
export function checkKeyOrgAccess(actor: ApiKeyActor, orgId: unknown, capability: Capability): KeyOrgAccess {
  const id = parseId(orgId, AccessErrors.orgNotFound);
  // Another organization's id: not found, exactly as for an outsider (a key cannot probe tenants).
  if (id !== actor.organizationId) throw AccessErrors.orgNotFound();
  // Only what its scopes grant, never what a role would.
  if (!keyCan(actor.scopes, capability)) throw CommonErrors.apiKeyRefused(scopeGranting(capability));
  return { actor, orgId: id, membership: null };
}

/** Whether the caller behind an access also holds another capability here (role or scopes). */
export const accessCan = (access: CallerOrgAccess, capability: Capability): boolean =>
  access.membership ? can(access.membership.role, capability) : keyCan(access.actor.scopes, capability);

/**
 * The same guard over what the caller already read: the membership (undefined when there is none)
 * and whether the member is past the organization's MFA deadline. A query that reads both at once
 * (the signing path) answers exactly as `requireOrgAccess` would.
 */
export function checkOrgAccess(actor: UserActor, orgId: string, membership: ActiveMembership | undefined, pastMfaDeadline: boolean, capability: Capability): OrgAccess {
  // Not a member: answer as if the organization did not exist (no probing of other tenants).
  if (!membership) throw AccessErrors.orgNotFound();
  // Past an organization's MFA deadline without MFA: restricted until the member enrolls.
  if (pastMfaDeadline) throw AccessErrors.mfaComplianceRequired();
  // A delegated token reads and uses what a member may; it never administers (whatever the role behind it).
  if (actor.delegation && !DELEGABLE.has(capability)) throw CommonErrors.insufficientScope(undefined);
  if (!can(membership.role, capability)) {
    throw AccessErrors.roleForbids(describe(capability));
  }
  // A role held through a time-bounded grant never confers what would outlive it (permissions.ts).
  if (STORED_ROLE_ONLY.has(capability)) requireStoredRole({ membership }, capability);
  return { actor, orgId, membership };
}

const describe = (capability: Capability): string => DESCRIBE[capability] ?? capability.replace(/[._]/g, " ");

/**
 * The capability by the *stored* role alone (the role kept on the membership, not one held through
 * a role grant): 403 ELEVATED_ROLE_FORBIDS when only the grant confers it. checkOrgAccess applies it
 * to STORED_ROLE_ONLY; services call it for the steps that must not rest on a grant (deciding
 * access requests, setting their policies).
 */
export function requireStoredRole(access: { membership: ActiveMembership }, capability: Capability, action?: string): void {
  const m = access.membership;
  if (can(m.storedRole, capability)) return;
  if (can(m.role, capability)) throw AccessErrors.elevationForbids(action ?? describe(capability), m.role, m.elevatedUntil);
  throw AccessErrors.roleForbids(action ?? describe(capability));
}

