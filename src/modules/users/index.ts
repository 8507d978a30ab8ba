import type { Database } from "../../infra/db.js";
import type { AnnouncedCache } from "../../infra/announced-cache.js";
import { createUserCache } from "./user-cache.js";
import type { ProfileRow } from "./users.repository.js";
import { UsersService, type UsersDeps } from "./users.service.js";

export { noteProfileChanged } from "./users.repository.js";
export type { ProfileReader } from "./user-cache.js";
export type { ProfileRow } from "./users.repository.js";

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
