import type { Executor } from "../../infra/db.js";
import { AppError } from "../../lib/errors.js";
import type { UserActor } from "../../lib/request-context.js";
import { parseId } from "../../lib/validation.js";
import { getActiveMemberships } from "../orgs/memberships.repository.js";
import { roleRank } from "../orgs/permissions.js";
import { UserErrors } from "../users/users.errors.js";
import { usersRepository, type UserRow } from "../users/users.repository.js";

export const AdminErrors = {
  ownerProtection: () => new AppError("OWNER_PROTECTION", 403, "This user is an owner of your shared organization: only a higher role can administer them"),
  notAllowed: () => new AppError("AUTHORIZATION_ERROR", 403, "Your role does not let you administer this user"),
  self: (what: string) => new AppError("BAD_REQUEST", 400, `You cannot ${what} your own account`),
  notDeleted: () => new AppError("NOT_DELETED", 409, "The account is not deleted"),
  emailTaken: () => new AppError("CONFLICT", 409, "Another account now uses this email address"),
};

/** The live target account, if the actor may administer it. */
export async function reachUser(db: Executor, actor: UserActor, userId: string, opts: { allowSelf: boolean; what?: string }): Promise<UserRow> {
  const user = await usersRepository.findById(db, parseId(userId, UserErrors.notFound));
  if (!user) throw UserErrors.notFound();
  await assertReach(db, actor, user, opts);
  return user;
}

/**
 * Guard order: not oneself (where that matters); superadmins reach everyone; others only through
 * an organization they share where their role is above the target's, and never a superadmin.
 */
export async function assertReach(db: Executor, actor: UserActor, target: UserRow, opts: { allowSelf: boolean; what?: string }): Promise<void> {
  if (target.id === actor.userId) {
    if (opts.allowSelf) return;
    throw AdminErrors.self(opts.what ?? "administer");
  }
  if (actor.isSuperadmin) return;
  const mine = new Map((await getActiveMemberships(db, actor.userId)).map((m) => [m.organizationId, m.role]));
  const adminIn = (await getActiveMemberships(db, target.id)).filter((m) => roleRank(mine.get(m.organizationId) ?? "guest") >= roleRank("admin"));
  // Users outside the actor's administered organizations do not exist for them.
  if (adminIn.length === 0) throw UserErrors.notFound();
  if (target.isSuperadmin) throw AdminErrors.notAllowed();
  if (!adminIn.some((m) => roleRank(mine.get(m.organizationId)!) > roleRank(m.role))) {
    throw adminIn.some((m) => m.role === "owner") ? AdminErrors.ownerProtection() : AdminErrors.notAllowed();
  }
}

