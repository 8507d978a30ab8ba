import { and, count, eq, inArray, sql } from "drizzle-orm";
import { activeMemberships } from "../../../schema/index.js";
import { resultRows, type Executor } from "../../infra/db.js";
import { preparedQuery } from "../../infra/prepared.js";
import { applicationClock } from "../../infra/clock.js";
import type { OrgRole } from "./permissions.js";

/** A placeholder for the time a membership is read at (the application clock's now, as an ISO string). */
export const AT = sql.placeholder("at");

/**
 * The role grants in force at `at` for the membership `membershipId` (a column or value): approved
 * role requests of the same person and organization whose window holds `at` and which began after
 * the membership did (a grant does not survive leaving and coming back). Written inline, as a
 * correlated subquery, rather than as a SQL function: PostgreSQL plans it with the statement
 * (an index probe, about a microsecond), where a SQL function with a FROM clause is planned again
 * at every call (about 65 µs, several calls per signature).
 */
const grantsInForce = (membershipId: unknown, at: unknown) => sql`from access_requests ar join org_memberships m on m.id = ${membershipId}
  where ar.user_id = m.user_id and ar.organization_id = m.organization_id and ar.kind = 'role' and ar.state = 'approved'
    and ar.grant_starts_at <= ${at}::timestamptz and ar.grant_ends_at > ${at}::timestamptz and ar.grant_starts_at >= m.created_at`;

/**
 * The effective role of a membership at `at`: the stronger of its stored role and a role grant in
 * force (org_role's order: owner first). The same answer as the SQL function effective_org_role
 * (migration 0034), which stays for ad-hoc queries.
 */
export const effectiveRoleSql = (membershipId: unknown, storedRole: unknown, at: unknown) =>
  sql`least(${storedRole}, (select min(ar.requested_role) ${grantsInForce(membershipId, at)}))`;

/**
 * When the role above the stored one ends (null: not elevated at `at`): the latest end among the
 * grants in force of the strongest role granted, if it is above the stored role (as
 * org_role_elevated_until, migration 0034).
 */
const elevatedUntilSql = (membershipId: unknown, at: unknown) =>
  sql`(select (array_agg(ar.grant_ends_at order by ar.requested_role, ar.grant_ends_at desc))[1] ${grantsInForce(membershipId, at)} and ar.requested_role < m.role)`;

/**
 * THE place that decides a member's role (issue 37): the effective role is the stronger of the
 * stored role and a role grant in force at `at` (effectiveRoleSql); every reader of memberships
 * selects these columns, so tenancy checks, admin reach, signing and GraphQL's @org checks all see
 * one answer. `storedRole` is the role kept on the membership; `elevatedUntil` is when a role above
 * it ends (null: not elevated). `at` is a placeholder (prepared statements) or a value.
 */
export const membershipColumns = (at: unknown = AT) => ({
  membershipId: activeMemberships.membershipId,
  organizationId: activeMemberships.organizationId,
  organizationName: activeMemberships.organizationName,
  organizationSlug: activeMemberships.organizationSlug,
  role: sql<OrgRole>`${effectiveRoleSql(activeMemberships.membershipId, activeMemberships.role, at)}`.as("effective_role"),
  storedRole: activeMemberships.role,
  elevatedUntil: sql<Date | null>`${elevatedUntilSql(activeMemberships.membershipId, at)}`
    .mapWith((v: unknown) => (v == null ? null : new Date(v as string)))
    .as("elevated_until"),
  joinedAt: activeMemberships.joinedAt,
});

/** The read time every membership read passes for `at`. */
export const readAt = (): string => applicationClock.now().toISOString();

/** One live membership of a live organization (a row of the active_memberships view), with its effective role. */
export type ActiveMembership = Pick<typeof activeMemberships.$inferSelect, "membershipId" | "organizationId" | "organizationName" | "organizationSlug" | "joinedAt"> & {
  role: OrgRole;
  storedRole: OrgRole;
  elevatedUntil: Date | null;
};

/**
 * "Which organizations is this user in?" — live memberships of live organizations, through the
 * active_memberships view, each with its effective role now. Every such question goes through here.
 */
const findAllOfUser = preparedQuery("active_memberships_of_user", (db) =>
  db.select(membershipColumns()).from(activeMemberships).where(eq(activeMemberships.userId, sql.placeholder("userId"))).orderBy(activeMemberships.organizationName),
);

const findOneOfUser = preparedQuery("active_membership_of_user", (db) =>
  db
    .select(membershipColumns())
    .from(activeMemberships)
    .where(and(eq(activeMemberships.userId, sql.placeholder("userId")), eq(activeMemberships.organizationId, sql.placeholder("organizationId")))),
);

export async function getActiveMemberships(db: Executor, userId: string): Promise<ActiveMembership[]> {
  return (await findAllOfUser(db, { userId, at: readAt() })) as ActiveMembership[];
}

/** The caller's active membership in one organization, if any. */
export async function getActiveMembership(db: Executor, userId: string, organizationId: string): Promise<ActiveMembership | undefined> {
  const [row] = await findOneOfUser(db, { userId, organizationId, at: readAt() });
  return row as ActiveMembership | undefined;
}

/** The live memberships of several users at once (one statement, for a page of accounts), by organization name. */
export async function getActiveMembershipsOfUsers(db: Executor, userIds: string[]): Promise<Array<ActiveMembership & { userId: string }>> {
  if (userIds.length === 0) return [];
  return (await db
    .select({ ...membershipColumns(readAt()), userId: activeMemberships.userId })
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
