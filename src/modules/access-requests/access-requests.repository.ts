import { and, asc, desc, eq, gt, inArray, lte, sql } from "drizzle-orm";
import { unionAll } from "drizzle-orm/pg-core";
import { accessRequestPolicies, accessRequests, departmentAccessPolicies, roleAccessPolicies, departmentMembers, departmentPrincipals, departments, orgMemberships, organizations, principals, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { preparedQuery } from "../../infra/prepared.js";
import { live } from "../../infra/soft-delete.js";

export type AccessRequestRow = typeof accessRequests.$inferSelect;
export type AccessPolicyRow = typeof accessRequestPolicies.$inferSelect;
export type DepartmentPolicyRow = typeof departmentAccessPolicies.$inferSelect;
export type RolePolicyRow = typeof roleAccessPolicies.$inferSelect;
export type RequestState = AccessRequestRow["state"];
/** A principal held through a grant in force, until when, and the department granted (null: the principal itself). */
export type ActiveGrant = { principal: string; endsAt: Date; departmentId: string | null };

/** A request with who asked, in which organization (lists for approvers and admins). */
export interface AccessRequestListed {
  request: AccessRequestRow;
  email: string;
  fullName: string | null;
  organizationName: string;
}

const listed = { request: accessRequests, email: users.email, fullName: users.fullName, organizationName: organizations.name };

const P = { userId: sql.placeholder("userId"), orgId: sql.placeholder("orgId"), at: sql<Date>`${sql.placeholder("at")}::timestamptz` };

/**
 * The grants in force (accessRequestsRepository.activeGrants), built and prepared once: signing
 * reads them on every user certificate, and building this union each time cost more of the main
 * thread than the rest of the signature's reads and writes together.
 */
const activeGrantsQuery = preparedQuery("access_active_grants", (db) => {
  const inForce = and(
    eq(accessRequests.userId, P.userId),
    eq(accessRequests.organizationId, P.orgId),
    eq(accessRequests.state, "approved"),
    lte(accessRequests.grantStartsAt, P.at),
    // An early end (revoke) moves grantEndsAt to that moment: the grant is out of force from then.
    gt(accessRequests.grantEndsAt, P.at),
  );
  // Granted during the current membership: leaving ends every grant, and coming back revives none.
  const member = and(eq(orgMemberships.organizationId, P.orgId), eq(orgMemberships.userId, P.userId), live(orgMemberships), lte(orgMemberships.createdAt, accessRequests.grantStartsAt));
  const direct = db
    .select({ principal: principals.name, endsAt: accessRequests.grantEndsAt, departmentId: sql<string | null>`null::uuid`.as("department_id") })
    .from(accessRequests)
    .innerJoin(principals, eq(principals.id, accessRequests.principalId))
    .innerJoin(orgMemberships, member)
    .where(and(inForce, eq(accessRequests.kind, "principal"), live(principals)));
  // A department's grant: the department's principals as they are now (as for its members).
  const viaDepartment = db
    .select({ principal: principals.name, endsAt: accessRequests.grantEndsAt, departmentId: accessRequests.departmentId })
    .from(accessRequests)
    .innerJoin(departments, and(eq(departments.id, accessRequests.departmentId), live(departments)))
    .innerJoin(departmentPrincipals, eq(departmentPrincipals.departmentId, accessRequests.departmentId))
    .innerJoin(principals, eq(principals.id, departmentPrincipals.principalId))
    .innerJoin(orgMemberships, member)
    .where(and(inForce, eq(accessRequests.kind, "department"), live(principals)));
  return unionAll(direct, viaDepartment);
});

/** Requests, their policies and the grants they became. */
export const accessRequestsRepository = {
  /** A live principal of the organization, by id or by name. */
  async principal(db: Executor, orgId: string, ref: { id?: string; name?: string }) {
    const by = ref.id ? eq(principals.id, ref.id) : eq(principals.name, ref.name ?? "");
    return (await db.select({ id: principals.id, name: principals.name }).from(principals).where(and(eq(principals.organizationId, orgId), by, live(principals))))[0];
  },

  async department(db: Executor, orgId: string, id: string) {
    return (await db.select({ id: departments.id, name: departments.name }).from(departments).where(and(eq(departments.organizationId, orgId), eq(departments.id, id), live(departments))))[0];
  },

  /** A live department of the organization, by id or by name. */
  async departmentRef(db: Executor, orgId: string, ref: { id?: string; name?: string }) {
    const by = ref.id ? eq(departments.id, ref.id) : eq(departments.name, ref.name ?? "");
    return (await db.select({ id: departments.id, name: departments.name }).from(departments).where(and(eq(departments.organizationId, orgId), by, live(departments))))[0];
  },

  async departmentPolicy(db: Executor, orgId: string, departmentId: string): Promise<DepartmentPolicyRow | undefined> {
    return (await db.select().from(departmentAccessPolicies).where(and(eq(departmentAccessPolicies.organizationId, orgId), eq(departmentAccessPolicies.departmentId, departmentId))))[0];
  },

  async departmentPolicies(db: Executor, orgId: string) {
    return db
      .select({ policy: departmentAccessPolicies, departmentName: departments.name })
      .from(departmentAccessPolicies)
      .innerJoin(departments, eq(departments.id, departmentAccessPolicies.departmentId))
      .where(and(eq(departmentAccessPolicies.organizationId, orgId), live(departments)))
      .orderBy(asc(departments.name));
  },

  async upsertDepartmentPolicy(db: Executor, v: typeof departmentAccessPolicies.$inferInsert): Promise<DepartmentPolicyRow> {
    const { organizationId: _o, departmentId: _d, createdAt: _c, ...set } = v;
    const [row] = await db
      .insert(departmentAccessPolicies)
      .values(v)
      .onConflictDoUpdate({ target: [departmentAccessPolicies.organizationId, departmentAccessPolicies.departmentId], set })
      .returning();
    return row!;
  },

  async rolePolicy(db: Executor, orgId: string, role: "admin" | "member"): Promise<RolePolicyRow | undefined> {
    return (await db.select().from(roleAccessPolicies).where(and(eq(roleAccessPolicies.organizationId, orgId), eq(roleAccessPolicies.role, role))))[0];
  },

  async rolePolicies(db: Executor, orgId: string): Promise<RolePolicyRow[]> {
    return db.select().from(roleAccessPolicies).where(eq(roleAccessPolicies.organizationId, orgId)).orderBy(asc(roleAccessPolicies.role));
  },

  async upsertRolePolicy(db: Executor, v: typeof roleAccessPolicies.$inferInsert): Promise<RolePolicyRow> {
    const { organizationId: _o, role: _r, createdAt: _c, ...set } = v;
    const [row] = await db.insert(roleAccessPolicies).values(v).onConflictDoUpdate({ target: [roleAccessPolicies.organizationId, roleAccessPolicies.role], set }).returning();
    return row!;
  },

  /** The role kept on the person's live membership (audit records of role requests name it). */
  async storedRole(db: Executor, orgId: string, userId: string): Promise<string | null> {
    const [row] = await db.select({ role: orgMemberships.role }).from(orgMemberships).where(and(eq(orgMemberships.organizationId, orgId), eq(orgMemberships.userId, userId), live(orgMemberships)));
    return row?.role ?? null;
  },

  async person(db: Executor, userId: string) {
    return (await db.select({ email: users.email, fullName: users.fullName }).from(users).where(eq(users.id, userId)))[0];
  },

  async inDepartment(db: Executor, userId: string, departmentId: string): Promise<boolean> {
    const rows = await db.select({ u: departmentMembers.userId }).from(departmentMembers).where(and(eq(departmentMembers.userId, userId), eq(departmentMembers.departmentId, departmentId)));
    return rows.length > 0;
  },

  async policy(db: Executor, orgId: string, principalId: string): Promise<AccessPolicyRow | undefined> {
    return (await db.select().from(accessRequestPolicies).where(and(eq(accessRequestPolicies.organizationId, orgId), eq(accessRequestPolicies.principalId, principalId))))[0];
  },

  async policies(db: Executor, orgId: string) {
    return db
      .select({ policy: accessRequestPolicies, principalName: principals.name })
      .from(accessRequestPolicies)
      .innerJoin(principals, eq(principals.id, accessRequestPolicies.principalId))
      .where(and(eq(accessRequestPolicies.organizationId, orgId), live(principals)))
      .orderBy(asc(principals.name));
  },

  async upsertPolicy(db: Executor, v: typeof accessRequestPolicies.$inferInsert): Promise<AccessPolicyRow> {
    const { organizationId: _o, principalId: _p, createdAt: _c, ...set } = v;
    const [row] = await db
      .insert(accessRequestPolicies)
      .values(v)
      .onConflictDoUpdate({ target: [accessRequestPolicies.organizationId, accessRequestPolicies.principalId], set })
      .returning();
    return row!;
  },

  async insert(db: Executor, v: typeof accessRequests.$inferInsert): Promise<AccessRequestRow> {
    const [row] = await db.insert(accessRequests).values(v).returning();
    return row!;
  },

  /** The request, locked: concurrent decisions on it queue, and the second sees the first's state. */
  async lock(db: Executor, orgId: string, id: string): Promise<AccessRequestRow | undefined> {
    return (await db.select().from(accessRequests).where(and(eq(accessRequests.id, id), eq(accessRequests.organizationId, orgId))).for("update"))[0];
  },

  async update(db: Executor, id: string, v: Partial<typeof accessRequests.$inferInsert>): Promise<AccessRequestRow> {
    const [row] = await db.update(accessRequests).set(v).where(eq(accessRequests.id, id)).returning();
    return row!;
  },

  /** Pending requests past their time become expired (read paths call this first: no job needed). */
  async lapse(db: Executor, now: Date, where: { orgIds?: string[]; userId?: string }): Promise<AccessRequestRow[]> {
    if (where.orgIds && where.orgIds.length === 0) return [];
    return db
      .update(accessRequests)
      .set({ state: "expired", updatedAt: now })
      .where(
        and(
          eq(accessRequests.state, "pending"),
          lte(accessRequests.expiresAt, now),
          where.orgIds ? inArray(accessRequests.organizationId, where.orgIds) : undefined,
          where.userId ? eq(accessRequests.userId, where.userId) : undefined,
        ),
      )
      .returning();
  },

  /** A person's requests in every organization they still belong to, newest first. */
  async ofUser(db: Executor, userId: string): Promise<AccessRequestListed[]> {
    return db
      .select(listed)
      .from(accessRequests)
      .innerJoin(users, eq(users.id, accessRequests.userId))
      .innerJoin(organizations, eq(organizations.id, accessRequests.organizationId))
      .innerJoin(orgMemberships, and(eq(orgMemberships.organizationId, accessRequests.organizationId), eq(orgMemberships.userId, userId), live(orgMemberships)))
      .where(and(eq(accessRequests.userId, userId), live(organizations)))
      .orderBy(desc(accessRequests.createdAt))
      .limit(500);
  },

  /** An organization's requests (admins), optionally in one state, newest first. */
  async ofOrganizations(db: Executor, orgIds: string[], state?: RequestState): Promise<AccessRequestListed[]> {
    if (orgIds.length === 0) return [];
    return db
      .select(listed)
      .from(accessRequests)
      .innerJoin(users, eq(users.id, accessRequests.userId))
      .innerJoin(organizations, eq(organizations.id, accessRequests.organizationId))
      .where(and(inArray(accessRequests.organizationId, orgIds), state ? eq(accessRequests.state, state) : undefined))
      .orderBy(state === "pending" ? asc(accessRequests.createdAt) : desc(accessRequests.createdAt))
      .limit(500);
  },

  /**
   * The organizations where the person approves, with their role there. Approvers are counted by
   * the *stored* role on purpose (org_memberships.role, not effective_org_role): a role held
   * through a grant decides nothing (docs/access-requests.md).
   */
  async approverOrgIds(db: Executor, userId: string): Promise<Array<{ id: string; role: "owner" | "admin" | "member" | "guest" }>> {
    return db
      .select({ id: orgMemberships.organizationId, role: orgMemberships.role })
      .from(orgMemberships)
      .innerJoin(organizations, eq(organizations.id, orgMemberships.organizationId))
      .where(and(eq(orgMemberships.userId, userId), inArray(orgMemberships.role, ["owner", "admin"]), live(orgMemberships), live(organizations)));
  },

  /**
   * Who is told of a new request: the organization's approvers (stored role, as above: admins and
   * owners, or owners alone for a role request) with an active account.
   */
  async approverContacts(db: Executor, orgId: string, ownersOnly = false) {
    return db
      .select({ userId: users.id, email: users.email, fullName: users.fullName })
      .from(orgMemberships)
      .innerJoin(users, eq(users.id, orgMemberships.userId))
      .where(and(eq(orgMemberships.organizationId, orgId), inArray(orgMemberships.role, ownersOnly ? ["owner"] : ["owner", "admin"]), live(orgMemberships), live(users), eq(users.status, "active")));
  },

  /**
   * The person's grants in force at `at` in the organization: approved requests whose window
   * holds `at`, for principals that still exist. Signing reads this; nothing has to end them.
   */
  async activeGrants(db: Executor, userId: string, orgId: string, at: Date): Promise<ActiveGrant[]> {
    const rows = await activeGrantsQuery(db, { userId, orgId, at: at.toISOString() });
    return rows.map((r) => ({ principal: r.principal, endsAt: r.endsAt!, departmentId: r.departmentId ?? null }));
  },
};
