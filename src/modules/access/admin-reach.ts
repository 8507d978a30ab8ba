import type { Executor } from "../../infra/db.js";
import type { UserActor } from "../../lib/request-context.js";
import { AccessErrors } from "./access.errors.js";
import { getActiveMembership } from "./memberships.repository.js";
import { isAdminRole, roleRank } from "./permissions.js";

/** What the rule needs to know of the account acted on. */
export interface ReachTarget {
  id: string;
  managedByOrganizationId: string | null;
  isSuperadmin: boolean;
}

/**
 * THE admin-reach rule (ARCHITECTURE rule 16): who may act on another person's account, i.e. set or
 * reset its password, remove its MFA, unlink a provider, suspend, delete or restore it, and read its
 * credentials' metadata. docs/accounts.md "Accounts: who may do what to whom" is this function in words.
 *
 *   caller                                              reach
 *   superadmin                                          every account
 *   owner/admin of the organization managing the        that account, while it is a member there
 *     account, with a role above the account's there     (never a superadmin)
 *   anyone else (sharing an organization included)      none: the account "does not exist"
 *
 * Marking an address verified is narrower still (superadmins only) and lives in the admin service;
 * finding the account by id is the admin module's `reachUser`.
 */
/** Guard order: oneself (only where allowed); superadmins; then the managing organization's admins only. */
export async function assertReach(db: Executor, actor: UserActor, target: ReachTarget, opts: { allowSelf: boolean; what?: string }): Promise<void> {
  if (target.id === actor.userId) {
    if (opts.allowSelf) return;
    // Acting on oneself goes through the self-service routes, which ask for the current credentials.
    throw AccessErrors.reachSelf(opts.what ?? "administer");
  }
  if (actor.isSuperadmin) return;
  // An account nobody manages is its owner's alone: to everyone else it does not exist here.
  const orgId = target.managedByOrganizationId;
  if (!orgId) throw AccessErrors.userNotFound();
  const [mine, theirs] = await Promise.all([getActiveMembership(db, actor.userId, orgId), getActiveMembership(db, target.id, orgId)]);
  // Only the managing organization's admins: membership elsewhere, shared or not, grants nothing.
  if (!mine || !theirs || !isAdminRole(mine.role)) throw AccessErrors.userNotFound();
  // Reach rests on the stored role: an admin only through a time-bounded grant sets no password,
  // removes no MFA, suspends nobody (permissions.ts STORED_ROLE_ONLY, users.admin).
  if (!isAdminRole(mine.storedRole)) throw AccessErrors.elevationForbids("administer accounts", mine.role, mine.elevatedUntil);
  // Operators are administered by operators only.
  if (target.isSuperadmin) throw AccessErrors.reachForbidden();
  // Admins administer the roles below their own: an admin never reaches another admin or an owner.
  if (roleRank(mine.storedRole) <= roleRank(theirs.storedRole)) throw theirs.storedRole === "owner" ? AccessErrors.ownerProtection() : AccessErrors.reachForbidden();
}
