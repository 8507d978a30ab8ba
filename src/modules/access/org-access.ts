import type { Executor } from "../../infra/db.js";
import type { RequestContext, UserActor } from "../../lib/request-context.js";
import { CommonErrors } from "../../lib/errors.js";
import { parseId } from "../../lib/validation.js";
import { AccessErrors } from "./access.errors.js";
import { requireUser } from "./guards.js";
import { getActiveMembership, type ActiveMembership } from "./memberships.repository.js";
import { isPastMfaDeadline } from "./mfa-standing.repository.js";
import { can, type Capability } from "./permissions.js";

export interface OrgAccess {
  actor: UserActor;
  orgId: string;
  membership: ActiveMembership;
}

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
  return checkOrgAccess(actor, id, membership, membership ? await isPastMfaDeadline(db, actor.userId, id) : false, capability);
}

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
    throw AccessErrors.roleForbids(DESCRIBE[capability] ?? capability.replace(/[._]/g, " "));
  }
  return { actor, orgId, membership };
}

