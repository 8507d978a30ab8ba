import type { Database } from "../../infra/db.js";
import type { AnnouncedCache } from "../../infra/announced-cache.js";
import { createUserCache } from "./user-cache.js";
import type { ProfileRow } from "./users.repository.js";
import { UsersService, type UsersDeps } from "./users.service.js";

export { userAccounts } from "./accounts.js";
export { noteProfileChanged, userColumns, type EmailVerifiedVia, type NewUser, type ProfileRow, type UserRow, type UserStatus } from "./users.repository.js";
export type { ProfileReader } from "./user-cache.js";
export { UserErrors } from "./users.errors.js";
export { auditQuerySchema, deleteMeSchema, suspendSchema, updateMeSchema } from "./users.schemas.js";
export { type MeView, toUserView, type UserView } from "./users.views.js";

/**
 * The account profiles every authenticated request reads, kept in memory and invalidated by the
 * database's change announcements (user-cache.ts). Built before the modules that resolve callers.
 */
export function createUserProfiles(database: Database, ttlMs: number): Promise<AnnouncedCache<ProfileRow>> {
  return createUserCache(database, ttlMs);
}

/** The signed-in user's own account: profile, deletion, own audit log (rule 15). */
export function createUsersModule(deps: UsersDeps) {
  return { users: new UsersService(deps) };
}
