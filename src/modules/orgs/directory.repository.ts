import { and, eq, inArray, notInArray, sql } from "drizzle-orm";
import {
  departmentCertPolicies,
  departmentMembers,
  departmentPrincipals,
  departments,
  principalMembers,
  principals,
  users,
} from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";
import { live } from "../../infra/soft-delete.js";
import { preparedQuery } from "../../infra/prepared.js";

const certPolicyColumns = pickColumns(departmentCertPolicies, ["allowUserExpiry", "defaultExpiryHours", "maxExpiryHours", "allowedExtensions", "customExtensions", "requireHardwareKey", "requireTouch", "requireVerify", "updatedAt"]);
type CertPolicyRow = Pick<typeof departmentCertPolicies.$inferSelect, keyof typeof certPolicyColumns>;

export const departmentColumns = pickColumns(departments, ["id", "organizationId", "name", "description", "canSudo", "createdAt", "updatedAt"]);
export type DepartmentRow = Pick<typeof departments.$inferSelect, keyof typeof departmentColumns>;

export const principalColumns = pickColumns(principals, ["id", "organizationId", "name", "description", "createdAt", "updatedAt"]);
export type PrincipalRow = Pick<typeof principals.$inferSelect, keyof typeof principalColumns>;

const memberUserColumns = { userId: users.id, email: users.email, fullName: users.fullName };

/** Departments and principals of organizations, and who belongs to them. Org-scoped lookups only. */
// The signing path's reads, prepared once (src/infra/prepared.ts).
const listPrincipals = preparedQuery("principals_of_org", (db) =>
  db.select(principalColumns).from(principals).where(and(eq(principals.organizationId, sql.placeholder("orgId")), live(principals))).orderBy(principals.name),
);
const departmentPolicies = preparedQuery("department_policies_of_member", (db) =>
  db
    .select({ ...certPolicyColumns, departmentId: departmentCertPolicies.departmentId })
    .from(departmentMembers)
    .innerJoin(departments, eq(departments.id, departmentMembers.departmentId))
    .leftJoin(departmentCertPolicies, eq(departmentCertPolicies.departmentId, departments.id))
    .where(and(eq(departmentMembers.userId, sql.placeholder("userId")), eq(departments.organizationId, sql.placeholder("orgId")), live(departments))),
);

export const directoryRepository = {
  listDepartments: (db: Executor, orgId: string): Promise<DepartmentRow[]> =>
    db.select(departmentColumns).from(departments).where(and(eq(departments.organizationId, orgId), live(departments))).orderBy(departments.name),

  async findDepartment(db: Executor, orgId: string, id: string): Promise<DepartmentRow | undefined> {
    const [row] = await db.select(departmentColumns).from(departments).where(and(idInOrg(departments, orgId, id), live(departments)));
    return row;
  },

  async insertDepartment(db: Executor, v: { organizationId: string; name: string; description?: string; canSudo: boolean; now: Date }): Promise<DepartmentRow> {
    const [row] = await db.insert(departments).values({ ...v, createdAt: v.now, updatedAt: v.now }).returning(departmentColumns);
    return row!;
  },

  async updateDepartment(db: Executor, orgId: string, id: string, values: Partial<typeof departments.$inferInsert>): Promise<DepartmentRow | undefined> {
    const [row] = await db
      .update(departments)
      .set(values)
      .where(and(idInOrg(departments, orgId, id), live(departments)))
      .returning(departmentColumns);
    return row;
  },

  async deleteDepartmentLinks(db: Executor, id: string) {
    await db.delete(departmentMembers).where(eq(departmentMembers.departmentId, id));
    await db.delete(departmentPrincipals).where(eq(departmentPrincipals.departmentId, id));
  },

  listDepartmentMembers: (db: Executor, departmentId: string) =>
    db
      .select({ ...memberUserColumns, addedAt: departmentMembers.createdAt })
      .from(departmentMembers)
      .innerJoin(users, eq(users.id, departmentMembers.userId))
      .where(and(eq(departmentMembers.departmentId, departmentId), live(users)))
      .orderBy(users.email),

  /** Adds a member by hand; false when they were already in it. */
  async addDepartmentMember(db: Executor, departmentId: string, userId: string, now: Date): Promise<boolean> {
    const rows = await db.insert(departmentMembers).values({ departmentId, userId, createdAt: now }).onConflictDoNothing().returning({ userId: departmentMembers.userId });
    return rows.length === 1;
  },

  /** Adds a member granted by an SSO connection's mapping; false when they were already in it (by hand or by a grant). */
  async grantDepartmentMember(db: Executor, departmentId: string, userId: string, connectionId: string, now: Date): Promise<boolean> {
    const rows = await db
      .insert(departmentMembers)
      .values({ departmentId, userId, createdAt: now, grantedByConnectionId: connectionId })
      .onConflictDoNothing()
      .returning({ userId: departmentMembers.userId });
    return rows.length === 1;
  },

  /** Takes away the memberships this connection granted the person, except those it still grants; the departments removed. */
  async revokeDepartmentGrants(db: Executor, userId: string, connectionId: string, keep: string[]): Promise<string[]> {
    const rows = await db
      .delete(departmentMembers)
      .where(
        and(
          eq(departmentMembers.userId, userId),
          eq(departmentMembers.grantedByConnectionId, connectionId),
          ...(keep.length ? [notInArray(departmentMembers.departmentId, keep)] : []),
        ),
      )
      .returning({ departmentId: departmentMembers.departmentId });
    return rows.map((r) => r.departmentId);
  },

  async removeDepartmentMember(db: Executor, departmentId: string, userId: string): Promise<boolean> {
    const rows = await db
      .delete(departmentMembers)
      .where(and(eq(departmentMembers.departmentId, departmentId), eq(departmentMembers.userId, userId)))
      .returning({ userId: departmentMembers.userId });
    return rows.length === 1;
  },

  async findCertPolicy(db: Executor, departmentId: string) {
    const [row] = await db
      .select(certPolicyColumns)
      .from(departmentCertPolicies)
      .where(eq(departmentCertPolicies.departmentId, departmentId));
    return row;
  },

  async upsertCertPolicy(
    db: Executor,
    departmentId: string,
    v: {
      allowUserExpiry: boolean;
      defaultExpiryHours: number;
      maxExpiryHours: number;
      allowedExtensions: string[];
      customExtensions: string[];
      requireHardwareKey: boolean;
      requireTouch: boolean;
      requireVerify: boolean;
      now: Date;
    },
  ) {
    const values = { ...v, updatedAt: v.now };
    delete (values as { now?: Date }).now;
    await db
      .insert(departmentCertPolicies)
      .values({ departmentId, ...values })
      .onConflictDoUpdate({ target: departmentCertPolicies.departmentId, set: values });
  },

  listPrincipals: (db: Executor, orgId: string): Promise<PrincipalRow[]> => listPrincipals(db, { orgId }),

  /**
   * A user's departments in one organization, each with its stored certificate policy (null when
   * it has none): the signing policy in one round trip instead of one per department.
   */
  async userDepartmentPolicies(db: Executor, userId: string, orgId: string): Promise<Array<CertPolicyRow | null>> {
    const rows = await departmentPolicies(db, { userId, orgId });
    return rows.map(({ departmentId, ...policy }) => (departmentId ? (policy as CertPolicyRow) : null));
  },

  /**
   * The stored certificate policy of each of these live departments of the organization (null: a
   * department without one), with its name: what a time-bounded grant of a department applies.
   */
  async departmentPoliciesById(db: Executor, orgId: string, departmentIds: string[]): Promise<Array<{ departmentName: string; policy: CertPolicyRow | null }>> {
    if (departmentIds.length === 0) return [];
    const rows = await db
      .select({ ...certPolicyColumns, departmentId: departmentCertPolicies.departmentId, departmentName: departments.name })
      .from(departments)
      .leftJoin(departmentCertPolicies, eq(departmentCertPolicies.departmentId, departments.id))
      .where(and(eq(departments.organizationId, orgId), inArray(departments.id, departmentIds), live(departments)));
    return rows.map(({ departmentId, departmentName, ...policy }) => ({ departmentName, policy: departmentId ? (policy as CertPolicyRow) : null }));
  },

  async findPrincipal(db: Executor, orgId: string, id: string): Promise<PrincipalRow | undefined> {
    const [row] = await db.select(principalColumns).from(principals).where(and(idInOrg(principals, orgId, id), live(principals)));
    return row;
  },

  async insertPrincipal(db: Executor, v: { organizationId: string; name: string; description?: string; now: Date }): Promise<PrincipalRow> {
    const [row] = await db.insert(principals).values({ ...v, createdAt: v.now, updatedAt: v.now }).returning(principalColumns);
    return row!;
  },

  async updatePrincipal(db: Executor, orgId: string, id: string, values: Partial<typeof principals.$inferInsert>): Promise<PrincipalRow | undefined> {
    const [row] = await db
      .update(principals)
      .set(values)
      .where(and(idInOrg(principals, orgId, id), live(principals)))
      .returning(principalColumns);
    return row;
  },

  async deletePrincipalLinks(db: Executor, id: string) {
    await db.delete(principalMembers).where(eq(principalMembers.principalId, id));
    await db.delete(departmentPrincipals).where(eq(departmentPrincipals.principalId, id));
  },

  listPrincipalMembers: (db: Executor, principalId: string) =>
    db
      .select({ ...memberUserColumns, addedAt: principalMembers.createdAt })
      .from(principalMembers)
      .innerJoin(users, eq(users.id, principalMembers.userId))
      .where(and(eq(principalMembers.principalId, principalId), live(users)))
      .orderBy(users.email),

  async addPrincipalMember(db: Executor, principalId: string, userId: string, now: Date): Promise<boolean> {
    const rows = await db.insert(principalMembers).values({ principalId, userId, createdAt: now }).onConflictDoNothing().returning({ userId: principalMembers.userId });
    return rows.length === 1;
  },

  async removePrincipalMember(db: Executor, principalId: string, userId: string): Promise<boolean> {
    const rows = await db
      .delete(principalMembers)
      .where(and(eq(principalMembers.principalId, principalId), eq(principalMembers.userId, userId)))
      .returning({ userId: principalMembers.userId });
    return rows.length === 1;
  },

  /** Departments a principal is granted through. */
  listPrincipalDepartments: (db: Executor, principalId: string): Promise<DepartmentRow[]> =>
    db
      .select(departmentColumns)
      .from(departmentPrincipals)
      .innerJoin(departments, eq(departments.id, departmentPrincipals.departmentId))
      .where(and(eq(departmentPrincipals.principalId, principalId), live(departments)))
      .orderBy(departments.name),

  listDepartmentPrincipals: (db: Executor, departmentId: string): Promise<PrincipalRow[]> =>
    db
      .select(principalColumns)
      .from(departmentPrincipals)
      .innerJoin(principals, eq(principals.id, departmentPrincipals.principalId))
      .where(and(eq(departmentPrincipals.departmentId, departmentId), live(principals)))
      .orderBy(principals.name),

  async linkPrincipal(db: Executor, departmentId: string, principalId: string, now: Date): Promise<boolean> {
    const rows = await db.insert(departmentPrincipals).values({ departmentId, principalId, createdAt: now }).onConflictDoNothing().returning({ id: departmentPrincipals.principalId });
    return rows.length === 1;
  },

  async unlinkPrincipal(db: Executor, departmentId: string, principalId: string): Promise<boolean> {
    const rows = await db
      .delete(departmentPrincipals)
      .where(and(eq(departmentPrincipals.departmentId, departmentId), eq(departmentPrincipals.principalId, principalId)))
      .returning({ id: departmentPrincipals.principalId });
    return rows.length === 1;
  },

  /** Takes the user out of every department and principal of the organization (membership ended). */
  async removeUserFromOrganization(db: Executor, organizationId: string, userId: string): Promise<{ departmentIds: string[]; principalIds: string[] }> {
    const deptIds = db.select({ id: departments.id }).from(departments).where(eq(departments.organizationId, organizationId));
    const d = await db.delete(departmentMembers).where(and(eq(departmentMembers.userId, userId), inArray(departmentMembers.departmentId, deptIds))).returning({ id: departmentMembers.departmentId });
    const principalIds = db.select({ id: principals.id }).from(principals).where(eq(principals.organizationId, organizationId));
    const p = await db.delete(principalMembers).where(and(eq(principalMembers.userId, userId), inArray(principalMembers.principalId, principalIds))).returning({ id: principalMembers.principalId });
    return { departmentIds: d.map((r) => r.id), principalIds: p.map((r) => r.id) };
  },

  /** A user's departments in the given organizations. */
  userDepartments: (db: Executor, userId: string, orgIds: string[]) =>
    orgIds.length === 0
      ? Promise.resolve([] as DepartmentRow[])
      : db
          .select(departmentColumns)
          .from(departmentMembers)
          .innerJoin(departments, eq(departments.id, departmentMembers.departmentId))
          .where(and(eq(departmentMembers.userId, userId), inArray(departments.organizationId, orgIds), live(departments))),

  /** Principals a user holds directly in the given organizations. */
  userDirectPrincipals: (db: Executor, userId: string, orgIds: string[]) =>
    orgIds.length === 0
      ? Promise.resolve([] as PrincipalRow[])
      : db
          .select(principalColumns)
          .from(principalMembers)
          .innerJoin(principals, eq(principals.id, principalMembers.principalId))
          .where(and(eq(principalMembers.userId, userId), inArray(principals.organizationId, orgIds), live(principals))),

  /** Principals a user holds through their departments, with the department they came from. */
  userDepartmentPrincipals: (db: Executor, userId: string, orgIds: string[]) =>
    orgIds.length === 0
      ? Promise.resolve([] as Array<PrincipalRow & { departmentId: string }>)
      : db
          .select({ ...principalColumns, departmentId: departmentPrincipals.departmentId })
          .from(departmentMembers)
          .innerJoin(departments, eq(departments.id, departmentMembers.departmentId))
          .innerJoin(departmentPrincipals, eq(departmentPrincipals.departmentId, departments.id))
          .innerJoin(principals, eq(principals.id, departmentPrincipals.principalId))
          .where(and(eq(departmentMembers.userId, userId), inArray(departments.organizationId, orgIds), live(departments), live(principals))),
};
