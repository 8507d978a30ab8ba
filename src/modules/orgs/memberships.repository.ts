import { and, count, eq, inArray, ne, sql } from "drizzle-orm";
import { activeMemberships, orgMemberships, organizations, users } from "../../../schema/index.js";
import { noteChanged } from "../../infra/announced-cache.js";
import { resultRows, type Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";
import { preparedQuery } from "../../infra/prepared.js";
import type { OrgRole } from "./permissions.js";

/** The columns of a live membership every reader selects (the signing context reads them too). */
export const activeColumns = {
  membershipId: activeMemberships.membershipId,
  organizationId: activeMemberships.organizationId,
  organizationName: activeMemberships.organizationName,
  organizationSlug: activeMemberships.organizationSlug,
  role: activeMemberships.role,
  joinedAt: activeMemberships.joinedAt,
};

/** One live membership of a live organization (a row of the active_memberships view). */
export type ActiveMembership = Pick<typeof activeMemberships.$inferSelect, keyof typeof activeColumns>;

/**
 * "Which organizations is this user in?" — live memberships of live organizations, through the
 * active_memberships view. Every such question goes through here.
 */
const findAllOfUser = preparedQuery("active_memberships_of_user", (db) =>
  db.select(activeColumns).from(activeMemberships).where(eq(activeMemberships.userId, sql.placeholder("userId"))).orderBy(activeMemberships.organizationName),
);

const findOneOfUser = preparedQuery("active_membership_of_user", (db) =>
  db
    .select(activeColumns)
    .from(activeMemberships)
    .where(and(eq(activeMemberships.userId, sql.placeholder("userId")), eq(activeMemberships.organizationId, sql.placeholder("organizationId")))),
);

export async function getActiveMemberships(db: Executor, userId: string): Promise<ActiveMembership[]> {
  return (await findAllOfUser(db, { userId })) as ActiveMembership[];
}

/** The caller's active membership in one organization, if any. */
export async function getActiveMembership(db: Executor, userId: string, organizationId: string): Promise<ActiveMembership | undefined> {
  const [row] = await findOneOfUser(db, { userId, organizationId });
  return row as ActiveMembership | undefined;
}

/** The live memberships of several users at once (one statement, for a page of accounts), by organization name. */
export async function getActiveMembershipsOfUsers(db: Executor, userIds: string[]): Promise<Array<ActiveMembership & { userId: string }>> {
  if (userIds.length === 0) return [];
  return (await db
    .select({ ...activeColumns, userId: activeMemberships.userId })
    .from(activeMemberships)
    .where(inArray(activeMemberships.userId, userIds))
    .orderBy(activeMemberships.organizationName)) as Array<ActiveMembership & { userId: string }>;
}

export async function countActiveMemberships(db: Executor, userId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(activeMemberships).where(eq(activeMemberships.userId, userId));
  return row?.n ?? 0;
}

/**
 * The same count under a statement timeout of its own (`timeoutMs`), restored afterwards. Run it
 * in a savepoint: a timeout aborts what it runs in.
 */
export async function countActiveMembershipsWithin(sp: Executor, userId: string, timeoutMs: number): Promise<number> {
  const [previous] = resultRows<{ t: string }>(await sp.execute(sql`select current_setting('statement_timeout') as t`));
  await sp.execute(sql`select set_config('statement_timeout', ${String(timeoutMs)}, true)`);
  const n = await countActiveMemberships(sp, userId);
  await sp.execute(sql`select set_config('statement_timeout', ${previous?.t ?? "0"}, true)`);
  return n;
}

/** Every write below tells this process's membership cache (membership-cache.ts) before it commits. */
const noteMemberships = (userId: string | "*") => noteChanged("memberships", userId);

export const membershipsRepository = {
  async insert(db: Executor, v: { organizationId: string; userId: string; role: OrgRole; invitedBy: string | null; now: Date }) {
    noteMemberships(v.userId);
    const [row] = await db
      .insert(orgMemberships)
      .values({ organizationId: v.organizationId, userId: v.userId, role: v.role, invitedBy: v.invitedBy, joinedAt: v.now, createdAt: v.now, updatedAt: v.now })
      .returning({ id: orgMemberships.id });
    return row!;
  },

  async setRole(db: Executor, organizationId: string, userId: string, role: OrgRole, now: Date) {
    noteMemberships(userId);
    await db
      .update(orgMemberships)
      .set({ role, updatedAt: now })
      .where(and(eq(orgMemberships.organizationId, organizationId), eq(orgMemberships.userId, userId), live(orgMemberships)));
  },

  async softDelete(db: Executor, organizationId: string, userId: string, now: Date) {
    noteMemberships(userId);
    await db
      .update(orgMemberships)
      .set({ deletedAt: now, updatedAt: now })
      .where(and(eq(orgMemberships.organizationId, organizationId), eq(orgMemberships.userId, userId), live(orgMemberships)));
  },

  async softDeleteAllOfOrg(db: Executor, organizationId: string, now: Date) {
    noteMemberships("*");
    await db.update(orgMemberships).set({ deletedAt: now, updatedAt: now }).where(and(eq(orgMemberships.organizationId, organizationId), live(orgMemberships)));
  },

  async countOwners(db: Executor, organizationId: string): Promise<number> {
    const [row] = await db
      .select({ n: count() })
      .from(orgMemberships)
      .where(and(eq(orgMemberships.organizationId, organizationId), eq(orgMemberships.role, "owner"), live(orgMemberships)));
    return row?.n ?? 0;
  },

  async countMembers(db: Executor, organizationId: string): Promise<number> {
    const [row] = await db.select({ n: count() }).from(orgMemberships).where(and(eq(orgMemberships.organizationId, organizationId), live(orgMemberships)));
    return row?.n ?? 0;
  },

  /**
   * Serialises membership changes of one organization (FOR NO KEY UPDATE on its row): two
   * concurrent removals cannot both see "another owner remains" and leave none. It queues with
   * the organization's deletion and its certificate revocations (the same lock), but not with
   * inserts that merely reference the organization (their foreign-key check takes a key share):
   * a removal that then waits for its member's row would otherwise deadlock against that member's
   * activation or join, which hold the member's row while they insert.
   */
  async lockOrganization(db: Executor, organizationId: string): Promise<boolean> {
    const rows = await db
      .select({ id: organizations.id })
      .from(organizations)
      .where(and(eq(organizations.id, organizationId), live(organizations)))
      .for("no key update");
    return rows.length > 0;
  },

  /** Live memberships of the given organizations held by anyone but `userId`. */
  othersIn: (db: Executor, organizationIds: string[], userId: string): Promise<Array<{ organizationId: string; role: OrgRole }>> =>
    organizationIds.length === 0
      ? Promise.resolve([])
      : db
          .select({ organizationId: orgMemberships.organizationId, role: orgMemberships.role })
          .from(orgMemberships)
          .where(and(inArray(orgMemberships.organizationId, organizationIds), ne(orgMemberships.userId, userId), live(orgMemberships))),

  /** Members with their user fields, for listings. */
  async listMembers(db: Executor, organizationId: string) {
    return db
      .select({
        userId: orgMemberships.userId,
        role: orgMemberships.role,
        joinedAt: orgMemberships.joinedAt,
        email: users.email,
        fullName: users.fullName,
        avatarUrl: users.avatarUrl,
        status: users.status,
        lastLoginAt: users.lastLoginAt,
        managedByOrganizationId: users.managedByOrganizationId,
      })
      .from(orgMemberships)
      .innerJoin(users, eq(users.id, orgMemberships.userId))
      .where(and(eq(orgMemberships.organizationId, organizationId), live(orgMemberships), live(users)))
      .orderBy(users.email);
  },
};
