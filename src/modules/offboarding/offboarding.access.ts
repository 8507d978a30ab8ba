import type { Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { AccessErrors, type ActiveMembership, assertReach, checkKeyOrgAccess, getActiveMembership, type OrgRole, requireOrgAccess, requireOrgCaller, requirePersonalUser, roleRank } from "../access/index.js";
import { OrgErrors, organizationExists } from "../orgs/index.js";
import { UserErrors, userAccounts, type UserRow } from "../users/index.js";

/** Who is acting: a member admin (with their role), a superadmin, or the organization's API key. */
export type Caller = { kind: "member"; role: OrgRole } | { kind: "superadmin" } | { kind: "key" };

/**
 * May this caller act on the organization's people at all (offboard, reinstate, read receipts)?
 * Its owners and admins, superadmins (members or not), and the organization's API keys whose
 * scopes grant managing members (SCIM). Anyone else: the organization does not exist (404) or the
 * role is too low (403).
 */
export async function requireManager(db: Executor, ctx: RequestContext, orgId: string): Promise<Caller> {
  if (ctx.actor.kind === "apiKey") {
    checkKeyOrgAccess(ctx.actor, orgId, "members.manage");
    return { kind: "key" };
  }
  if (ctx.actor.kind === "user" && ctx.actor.isSuperadmin && !ctx.actor.delegation) {
    if (!(await organizationExists(db, orgId))) throw AccessErrors.orgNotFound();
    return { kind: "superadmin" };
  }
  const { membership } = await requireOrgAccess(db, ctx, orgId, "members.manage");
  return { kind: "member", role: membership.role };
}

/** The same for reading receipts: also keys that may read members. */
export async function requireReader(db: Executor, ctx: RequestContext, orgId: string): Promise<void> {
  if (ctx.actor.kind === "user" && ctx.actor.isSuperadmin && !ctx.actor.delegation) {
    if (!(await organizationExists(db, orgId))) throw AccessErrors.orgNotFound();
    return;
  }
  await requireOrgCaller(db, ctx, orgId, "members.manage");
}

/**
 * The person acted on, decided under the organization's lock. Never oneself. An account this
 * organization manages is reached by the admin-reach rule (rule 16: superadmins, or a role above
 * theirs); for any other member the rule of member removal holds (owners only by owners). The last
 * owner is never offboarded.
 */
export async function reachMember(tx: Executor, ctx: RequestContext, caller: Caller, orgId: string, userId: string): Promise<{ member: ActiveMembership; user: UserRow; managed: boolean }> {
  if (ctx.actor.kind === "user" && ctx.actor.userId === userId) throw AccessErrors.reachSelf("offboard");
  const member = await getActiveMembership(tx, userId, orgId);
  if (!member) throw OrgErrors.memberNotFound();
  const user = await userAccounts.find(tx, userId);
  if (!user) throw UserErrors.notFound();
  const managed = user.managedByOrganizationId === orgId;
  if (caller.kind === "member") {
    if (managed) await assertReach(tx, requirePersonalUser(ctx), user, { allowSelf: false, what: "offboard" });
    else if (member.role === "owner" && caller.role !== "owner") throw OrgErrors.ownerOnly();
  }
  // A machine caller (SCIM) never takes an owner away.
  if (caller.kind === "key" && member.role === "owner") throw OrgErrors.ownerOnly();
  return { member, user, managed };
}

/**
 * The same for someone suspended here whom a removal now takes away for good (no membership to
 * read the role from: the suspension's role stands in for it). The same answers as `reachMember`:
 * never oneself, an owner only by an owner, a managed account only by a role above its own.
 */
export async function reachSuspended(tx: Executor, ctx: RequestContext, caller: Caller, orgId: string, userId: string, role: OrgRole): Promise<{ member?: undefined; user: UserRow; managed: boolean }> {
  if (ctx.actor.kind === "user" && ctx.actor.userId === userId) throw AccessErrors.reachSelf("offboard");
  const user = await userAccounts.find(tx, userId);
  if (!user) throw UserErrors.notFound();
  const managed = user.managedByOrganizationId === orgId;
  if (role === "owner" && caller.kind !== "superadmin" && !(caller.kind === "member" && caller.role === "owner")) throw OrgErrors.ownerOnly();
  if (caller.kind === "member" && managed && caller.role !== "owner" && (user.isSuperadmin || roleRank(caller.role) <= roleRank(role))) throw AccessErrors.reachForbidden();
  return { user, managed };
}

/** Reinstating gives a role back: the owner role only from an owner (or a superadmin). */
export function assertMayGrant(caller: Caller, role: OrgRole): void {
  if (role === "owner" && caller.kind !== "superadmin" && !(caller.kind === "member" && caller.role === "owner")) throw OrgErrors.ownerOnly();
}
