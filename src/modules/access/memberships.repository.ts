import { and, count, eq, inArray, sql } from "drizzle-orm";
import { activeMemberships } from "../../../schema/index.js";
import { resultRows, type Executor } from "../../infra/db.js";
import { preparedQuery } from "../../infra/prepared.js";

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
