import { AnnouncedCache } from "../../infra/announced-cache.js";
import type { Database } from "../../infra/db.js";
import { usersRepository, type ProfileRow } from "./users.repository.js";

/** Accounts held at once per instance; the oldest read goes first. */
const MAX_ENTRIES = 10_000;
/** What announces changes to a profile (migration 0016). */
const TRIGGERS = ["users_notify_changed", "password_credentials_notify_changed", "organizations_notify_changed"];

/**
 * Account profiles (the row behind the signed-in caller and GET me), kept in memory so an
 * authenticated request does not read the same row from PostgreSQL every time. Triggers on users,
 * password_credentials and organizations (migration 0016) announce "user:<id>" or "user:*" for every
 * committed change a profile shows; src/infra/announced-cache.ts says why that keeps it exact.
 */
export function createUserCache(database: Database, ttlMs: number): Promise<AnnouncedCache<ProfileRow>> {
  return new AnnouncedCache<ProfileRow>({ kind: "user", load: (id) => usersRepository.findProfile(database.db, id), ttlMs, maxEntries: MAX_ENTRIES, triggers: TRIGGERS }).attach(database);
}

/** Reads an account's profile by id: the live account, or undefined. */
export interface ProfileReader {
  get(id: string): Promise<ProfileRow | undefined>;
}
