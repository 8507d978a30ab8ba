import { and, asc, count, eq, isNull, sql } from "drizzle-orm";
import { departments, orgMemberships, scimUsers, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import type { Filter } from "./scim-filter.js";
import { pageOf, splitFilter, type SqlCatalog } from "./scim-filter.repository.js";
import type { ScimUserRecord } from "./scim-user.js";

/**
 * The columns of a User, with its department's name and its manager's name (null: none, or no
 * longer a User of the organization). Active: a member of the organization (not suspended there by
 * offboarding) whose account is not suspended. A person suspended here stays the organization's
 * managed account (a User it lists).
 */
/** A live membership in the organization (offboarding's suspension ends it). */
const memberSql = (organizationId: string) =>
  sql<boolean>`exists (select 1 from ${orgMemberships} where ${orgMemberships.organizationId} = ${organizationId} and ${orgMemberships.userId} = ${users.id} and ${orgMemberships.deletedAt} is null)`;

const selectionIn = (organizationId: string) => ({
  id: users.id,
  email: users.email,
  fullName: users.fullName,
  status: users.status,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
  externalId: scimUsers.externalId,
  givenName: scimUsers.givenName,
  familyName: scimUsers.familyName,
  displayName: scimUsers.displayName,
  version: scimUsers.version,
  scimUpdatedAt: scimUsers.updatedAt,
  managerId: scimUsers.managerId,
  department: sql<string | null>`(select d.name from ${departments} d where d.id = ${scimUsers.departmentId} and d.deleted_at is null)`,
  managerDisplayName: sql<string | null>`(select coalesce(ms.display_name, m.full_name, m.email) from ${users} m left join ${scimUsers} ms on ms.user_id = m.id where m.id = ${scimUsers.managerId} and m.managed_by_organization_id = ${organizationId} and m.deleted_at is null)`,
  member: memberSql(organizationId),
});

type Row = { id: string; email: string; fullName: string | null; status: string; createdAt: Date; updatedAt: Date; externalId: string | null; givenName: string | null; familyName: string | null; displayName: string | null; version: number | null; scimUpdatedAt: Date | null; managerId: string | null; department: string | null; managerDisplayName: string | null; member: boolean | string };

// Drivers answer a boolean from a raw expression as a boolean, or as the text 't'.
const active = (r: Row): boolean => (r.member === true || r.member === "t" || r.member === "true") && r.status !== "suspended";

function toRecord(r: Row): ScimUserRecord {
  const lastModified = r.scimUpdatedAt && r.scimUpdatedAt > r.updatedAt ? r.scimUpdatedAt : r.updatedAt;
  return {
    id: r.id,
    userName: r.email,
    externalId: r.externalId,
    givenName: r.givenName,
    familyName: r.familyName,
    formatted: r.fullName,
    displayName: r.displayName,
    active: active(r),
    department: r.department,
    // A manager who is no longer a User of the organization is not answered.
    manager: r.managerDisplayName !== null ? r.managerId : null,
    managerDisplayName: r.managerDisplayName,
    created: r.createdAt,
    lastModified,
    // Changes through SCIM bump the row's version; changes elsewhere (an admin's suspension) move the account's time.
    // (suspended here or reinstated by an admin: the membership's change shows in the version too).
    version: `${r.version ?? 0}-${r.updatedAt.getTime().toString(36)}${active(r) ? "" : "-i"}`,
  };
}

/** What a User filter names, in SQL (as toUserResource answers it: see scim-filter.repository.ts). */
const email = { kind: "text", expr: sql`${users.email}`, caseExact: false } as const; // stored lower-cased
const userSql = (organizationId: string): SqlCatalog => ({
  id: { kind: "text", expr: sql`${users.id}::text`, caseExact: true },
  externalId: { kind: "text", expr: sql`${scimUsers.externalId}`, caseExact: true },
  userName: email,
  displayName: { kind: "text", expr: sql`lower(coalesce(${scimUsers.displayName}, ${users.fullName}, ${users.email}))`, caseExact: false },
  active: { kind: "bool", expr: sql`(${memberSql(organizationId)} and ${users.status} <> 'suspended')` },
  "name.givenName": { kind: "text", expr: sql`lower(${scimUsers.givenName})`, caseExact: false },
  "name.familyName": { kind: "text", expr: sql`lower(${scimUsers.familyName})`, caseExact: false },
  "name.formatted": { kind: "text", expr: sql`lower(nullif(${users.fullName}, ''))`, caseExact: false },
  // `emails eq "…"` compares the elements' values (one element: the userName); `emails[…]` its sub-attributes.
  emails: email,
  "emails[]": { kind: "elements", exists: (cond) => cond, attributes: { value: email, type: { kind: "constant", value: "work" }, primary: { kind: "constant", value: true } } },
  "emails.value": email,
  "emails.type": { kind: "constant", value: "work" },
  "emails.primary": { kind: "constant", value: true },
});
/**
 * The organization's managed accounts as SCIM Users: live accounts the organization manages (rule
 * 16), with what its SCIM client said about them (none for an account provisioned otherwise, e.g.
 * by enterprise sign-in). Always pinned to one organization.
 */
export const scimUsersRepository = {
  /**
   * One page of the organization's Users that match the filter, oldest first: the
   * filter, the count and the page in SQL (two statements). When part of the filter has no SQL
   * form, `rest` is that part and `rows` are all the Users the other part lets through: the caller
   * filters and pages them.
   */
  async search(db: Executor, organizationId: string, filter: Filter | null, startIndex: number, size: number): Promise<{ rows: ScimUserRecord[]; total: number; rest: Filter | null }> {
    const { where, rest } = splitFilter(filter, userSql(organizationId));
    const base = and(eq(users.managedByOrganizationId, organizationId), isNull(users.deletedAt), where);
    const from = () => db.select(selectionIn(organizationId)).from(users).leftJoin(scimUsers, and(eq(scimUsers.userId, users.id), eq(scimUsers.organizationId, organizationId)));
    if (rest) {
      const rows = await from().where(base).orderBy(asc(users.createdAt), asc(users.id));
      return { rows: rows.map(toRecord), total: rows.length, rest };
    }
    const [counted] = await db
      .select({ n: count() })
      .from(users)
      .leftJoin(scimUsers, and(eq(scimUsers.userId, users.id), eq(scimUsers.organizationId, organizationId)))
      .where(base);
    const total = Number(counted?.n ?? 0);
    const { offset, limit } = pageOf(startIndex, size);
    if (limit === 0 || offset >= total) return { rows: [], total, rest: null };
    const rows = await from().where(base).orderBy(asc(users.createdAt), asc(users.id)).offset(offset).limit(limit);
    return { rows: rows.map(toRecord), total, rest: null };
  },

  async find(db: Executor, organizationId: string, userId: string): Promise<ScimUserRecord | undefined> {
    const [row] = await db
      .select(selectionIn(organizationId))
      .from(users)
      .leftJoin(scimUsers, and(eq(scimUsers.userId, users.id), eq(scimUsers.organizationId, organizationId)))
      .where(and(eq(users.id, userId), eq(users.managedByOrganizationId, organizationId), isNull(users.deletedAt)));
    return row ? toRecord(row) : undefined;
  },

  /** Writes the client's fields (a new row, or the next version of the row). */
  async upsert(
    db: Executor,
    v: { organizationId: string; userId: string; externalId: string | null; givenName: string | null; familyName: string | null; displayName: string | null; departmentId?: string | null; managerId: string | null; now: Date },
  ): Promise<void> {
    const values = { externalId: v.externalId, givenName: v.givenName, familyName: v.familyName, displayName: v.displayName, departmentId: v.departmentId, managerId: v.managerId, updatedAt: v.now };
    await db
      .insert(scimUsers)
      .values({ userId: v.userId, organizationId: v.organizationId, ...values, createdAt: v.now })
      .onConflictDoUpdate({ target: scimUsers.userId, set: { ...values, organizationId: v.organizationId, version: sql`${scimUsers.version} + 1` } });
  },

  /** The department the client's enterprise `department` put the person in (null: none). */
  async departmentOf(db: Executor, userId: string): Promise<string | null> {
    const [row] = await db.select({ id: scimUsers.departmentId }).from(scimUsers).where(eq(scimUsers.userId, userId));
    return row?.id ?? null;
  },

  /** Why the account is suspended (null: it is not, or no reason was given). */
  async suspensionReason(db: Executor, userId: string): Promise<string | null> {
    const [row] = await db.select({ status: users.status, reason: users.suspendedReason }).from(users).where(eq(users.id, userId));
    return row?.status === "suspended" ? row.reason : null;
  },

  async remove(db: Executor, userId: string): Promise<void> {
    await db.delete(scimUsers).where(eq(scimUsers.userId, userId));
  },
};
