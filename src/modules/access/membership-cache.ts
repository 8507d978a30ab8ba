import { AnnouncedCache } from "../../infra/announced-cache.js";
import { applicationClock } from "../../infra/clock.js";
import type { Database } from "../../infra/db.js";
import { getActiveMemberships, type ActiveMembership } from "./memberships.repository.js";

/** Users whose lists are held at once per instance; the oldest read goes first. */
const MAX_ENTRIES = 10_000;
/** What announces changes to a list (migrations 0018 and, for role grants given or ended early, 0034). */
const TRIGGERS = ["org_memberships_notify_changed", "organizations_notify_memberships_changed", "access_requests_notify_role_changed"];

/** Reads a user's live memberships of live organizations, by user id. */
export interface MembershipReader {
  get(userId: string): Promise<readonly ActiveMembership[] | undefined>;
}

/**
 * Each signed-in user's organizations (GET /auth/me shows them), kept in memory so that the most
 * frequent authenticated request stays without a PostgreSQL round trip. Triggers on
 * org_memberships and organizations (migration 0018) announce "memberships:<user id>" or
 * "memberships:*" for every committed change; src/infra/announced-cache.ts says why that keeps it
 * exact. For display only: every authorization decision reads memberships afresh.
 */
export function createMembershipCache(database: Database, ttlMs: number): Promise<AnnouncedCache<readonly ActiveMembership[]>> {
  return new AnnouncedCache<readonly ActiveMembership[]>({
    // The writes in memberships.repository.ts and orgs.repository.ts note changes under this kind.
    kind: "memberships",
    load: (userId) => getActiveMemberships(database.db, userId),
    ttlMs,
    maxEntries: MAX_ENTRIES,
    triggers: TRIGGERS,
    // A role grant ends by time, which nothing announces: a list showing one that has ended is read again.
    stale: (list) => list.some((m) => m.elevatedUntil !== null && m.elevatedUntil <= applicationClock.now()),
  }).attach(database);
}
