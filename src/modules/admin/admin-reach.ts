import type { Executor } from "../../infra/db.js";
import { AppError } from "../../lib/errors.js";
import type { UserActor } from "../../lib/request-context.js";
import { parseId } from "../../lib/validation.js";
import { UserErrors, userAccounts, type UserRow } from "../users/index.js";
import { AccessErrors, assertReach } from "../access/index.js";

export const AdminErrors = {
  ownerProtection: AccessErrors.ownerProtection,
  notAllowed: AccessErrors.reachForbidden,
  self: AccessErrors.reachSelf,
  notDeleted: () => new AppError("NOT_DELETED", 409, "The account is not deleted"),
  emailTaken: () => new AppError("CONFLICT", 409, "Another account now uses this email address"),
  ownOperatorRole: () => new AppError("BAD_REQUEST", 400, "You cannot change your own operator role: another superadmin must do it"),
  alreadySuperadmin: () => new AppError("ALREADY_SUPERADMIN", 409, "The account is already a superadmin"),
  notSuperadmin: () => new AppError("NOT_SUPERADMIN", 409, "The account is not a superadmin"),
  notActive: (status: string) => new AppError("ACCOUNT_NOT_ACTIVE", 409, `Only an active account can become a superadmin: this one is ${status === "suspended" ? "suspended" : "not activated yet"}`),
  unverified: () => new AppError("EMAIL_UNVERIFIED", 409, "Only an account with a verified email address can become a superadmin: mark it verified first if you checked it"),
};

/** The account `userId` names, if the admin-reach rule (access core, `assertReach`) lets the caller act on it. */
export async function reachUser(db: Executor, actor: UserActor, userId: string, opts: { allowSelf: boolean; what?: string }): Promise<UserRow> {
  const user = await userAccounts.find(db, parseId(userId, UserErrors.notFound));
  if (!user) throw UserErrors.notFound();
  await assertReach(db, actor, user, opts);
  return user;
}
