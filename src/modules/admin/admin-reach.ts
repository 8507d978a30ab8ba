import type { Executor } from "../../infra/db.js";
import { AppError } from "../../lib/errors.js";
import type { UserActor } from "../../lib/request-context.js";
import { parseId } from "../../lib/validation.js";
import { UserErrors } from "../users/index.js";
import { userAccounts, type UserRow } from "../users/index.js";
import { getActiveMembership, isAdminRole, roleRank } from "../access/index.js";

export const AdminErrors = {
  ownerProtection: () => new AppError("OWNER_PROTECTION", 403, "This account is an owner of the organization that manages it: only a superadmin can administer it"),
  notAllowed: () => new AppError("AUTHORIZATION_ERROR", 403, "Your role does not let you administer this account"),
  self: (what: string) => new AppError("BAD_REQUEST", 400, `You cannot ${what} your own account here: use your account settings`),
  notDeleted: () => new AppError("NOT_DELETED", 409, "The account is not deleted"),
  emailTaken: () => new AppError("CONFLICT", 409, "Another account now uses this email address"),
  ownOperatorRole: () => new AppError("BAD_REQUEST", 400, "You cannot change your own operator role: another superadmin must do it"),
  alreadySuperadmin: () => new AppError("ALREADY_SUPERADMIN", 409, "The account is already a superadmin"),
  notSuperadmin: () => new AppError("NOT_SUPERADMIN", 409, "The account is not a superadmin"),
  notActive: (status: string) => new AppError("ACCOUNT_NOT_ACTIVE", 409, `Only an active account can become a superadmin: this one is ${status === "suspended" ? "suspended" : "not activated yet"}`),
  unverified: () => new AppError("EMAIL_UNVERIFIED", 409, "Only an account with a verified email address can become a superadmin: mark it verified first if you checked it"),
};

/**
 * THE admin-reach rule (ARCHITECTURE rule 16): who may act on another person's account, i.e. set or
 * reset its password, remove its MFA, unlink a provider, suspend, delete or restore it, and read its
 * credentials' metadata. README "Who may do what to whom" is this function in words.
 *
 *   caller                                              reach
 *   superadmin                                          every account
 *   owner/admin of the organization managing the        that account, while it is a member there
 *     account, with a role above the account's there     (never a superadmin)
 *   anyone else (sharing an organization included)      none: the account "does not exist"
 *
 * Marking an address verified is narrower still (superadmins only) and lives in the admin service.
 */
export async function reachUser(db: Executor, actor: UserActor, userId: string, opts: { allowSelf: boolean; what?: string }): Promise<UserRow> {
  const user = await userAccounts.find(db, parseId(userId, UserErrors.notFound));
  if (!user) throw UserErrors.notFound();
  await assertReach(db, actor, user, opts);
  return user;
}

/** Guard order: oneself (only where allowed); superadmins; then the managing organization's admins only. */
export async function assertReach(db: Executor, actor: UserActor, target: UserRow, opts: { allowSelf: boolean; what?: string }): Promise<void> {
  if (target.id === actor.userId) {
    if (opts.allowSelf) return;
    // Acting on oneself goes through the self-service routes, which ask for the current credentials.
    throw AdminErrors.self(opts.what ?? "administer");
  }
  if (actor.isSuperadmin) return;
  // An account nobody manages is its owner's alone: to everyone else it does not exist here.
  const orgId = target.managedByOrganizationId;
  if (!orgId) throw UserErrors.notFound();
  const [mine, theirs] = await Promise.all([getActiveMembership(db, actor.userId, orgId), getActiveMembership(db, target.id, orgId)]);
  // Only the managing organization's admins: membership elsewhere, shared or not, grants nothing.
  if (!mine || !theirs || !isAdminRole(mine.role)) throw UserErrors.notFound();
  // Operators are administered by operators only.
  if (target.isSuperadmin) throw AdminErrors.notAllowed();
  // Admins administer the roles below their own: an admin never reaches another admin or an owner.
  if (roleRank(mine.role) <= roleRank(theirs.role)) throw theirs.role === "owner" ? AdminErrors.ownerProtection() : AdminErrors.notAllowed();
}
