import { and, asc, count, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import { departmentMembers, departments, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import type { Filter } from "./scim-filter.js";
import { pageOf, splitFilter, type SqlCatalog } from "./scim-filter.repository.js";

export interface DepartmentRecord {
  id: string;
  name: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface GroupMember {
  userId: string;
  email: string;
}

const columns = { id: departments.id, name: departments.name, createdAt: departments.createdAt, updatedAt: departments.updatedAt };

/** A Group filter's SQL: members are the department's members that the organization manages (as answered). */
function groupSql(organizationId: string): SqlCatalog {
  const someMember = (cond: SQL) =>
    sql`exists (select 1 from ${departmentMembers} dm join ${users} mu on mu.id = dm.user_id where dm.department_id = ${departments.id} and mu.managed_by_organization_id = ${organizationId} and mu.deleted_at is null and ${cond})`;
  const value = { kind: "text", expr: sql`dm.user_id::text`, caseExact: true } as const;
  const display = { kind: "text", expr: sql`mu.email`, caseExact: false } as const; // stored lower-cased
  return {
    id: { kind: "text", expr: sql`${departments.id}::text`, caseExact: true },
    // Not stored: clients match Groups by displayName.
    externalId: { kind: "constant", value: undefined },
    displayName: { kind: "text", expr: sql`lower(${departments.name})`, caseExact: false },
    members: { kind: "many", exists: someMember, of: value },
    "members.value": { kind: "many", exists: someMember, of: value },
    "members.display": { kind: "many", exists: someMember, of: display },
    // Inside `members[…]` the sub-attributes are the element's own, compared as `matches` does (not caseExact).
    "members[]": { kind: "elements", exists: someMember, attributes: { value: { kind: "text", expr: sql`lower(dm.user_id::text)`, caseExact: false }, display } },
  };
}

/**
 * The organization's departments as SCIM Groups (issue 36): a page of them in SQL, and the managed
 * members of a page's departments in one statement. Always pinned to one organization.
 */
export const scimGroupsRepository = {
  /** As scimUsersRepository.search: a page in SQL, or (rest) every department the SQL part lets through. */
  async search(db: Executor, organizationId: string, filter: Filter | null, startIndex: number, size: number): Promise<{ rows: DepartmentRecord[]; total: number; rest: Filter | null }> {
    const { where, rest } = splitFilter(filter, groupSql(organizationId));
    const base = and(eq(departments.organizationId, organizationId), isNull(departments.deletedAt), where);
    const order = [asc(departments.name), asc(departments.id)];
    if (rest) return { rows: await db.select(columns).from(departments).where(base).orderBy(...order), total: 0, rest };
    const [counted] = await db.select({ n: count() }).from(departments).where(base);
    const total = Number(counted?.n ?? 0);
    const { offset, limit } = pageOf(startIndex, size);
    if (limit === 0 || offset >= total) return { rows: [], total, rest: null };
    return { rows: await db.select(columns).from(departments).where(base).orderBy(...order).offset(offset).limit(limit), total, rest: null };
  },

  /** The members of these departments that the organization manages (live accounts), by department, by address. */
  async membersOf(db: Executor, organizationId: string, departmentIds: string[]): Promise<Map<string, GroupMember[]>> {
    const out = new Map<string, GroupMember[]>(departmentIds.map((id) => [id, []]));
    if (departmentIds.length === 0) return out;
    const rows = await db
      .select({ departmentId: departmentMembers.departmentId, userId: users.id, email: users.email })
      .from(departmentMembers)
      .innerJoin(users, eq(users.id, departmentMembers.userId))
      .where(and(inArray(departmentMembers.departmentId, departmentIds), eq(users.managedByOrganizationId, organizationId), isNull(users.deletedAt)))
      .orderBy(asc(users.email));
    for (const r of rows) out.get(r.departmentId)?.push({ userId: r.userId, email: r.email });
    return out;
  },

  /**
   * The organization's live department of this name (any case), created when there is none (the
   * enterprise `department`); `created` says which. Two at once create one (the other finds it).
   */
  async findOrCreateByName(tx: Executor, organizationId: string, name: string, now: Date): Promise<{ id: string; name: string; created: boolean }> {
    const find = async (exact: boolean) => {
      const [row] = await tx
        .select({ id: departments.id, name: departments.name })
        .from(departments)
        .where(and(eq(departments.organizationId, organizationId), isNull(departments.deletedAt), exact ? eq(departments.name, name) : sql`lower(${departments.name}) = lower(${name})`))
        .orderBy(asc(departments.name))
        .limit(1);
      return row;
    };
    const existing = await find(false);
    if (existing) return { ...existing, created: false };
    const [inserted] = await tx
      .insert(departments)
      .values({ organizationId, name, canSudo: false, createdAt: now, updatedAt: now })
      .onConflictDoNothing()
      .returning({ id: departments.id, name: departments.name });
    if (inserted) return { ...inserted, created: true };
    const raced = await find(true);
    if (!raced) throw new Error("department vanished while being created");
    return { ...raced, created: false };
  },

  /** Which of these ids are live accounts the organization manages (the only Users a Group may hold). */
  async managedAmong(db: Executor, organizationId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await db
      .select({ id: users.id })
      .from(users)
      .where(and(inArray(users.id, ids), eq(users.managedByOrganizationId, organizationId), isNull(users.deletedAt)));
    return new Set(rows.map((r) => r.id));
  },
};
