import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { orgMemberships, scimUsers, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import type { ScimUserRecord } from "./scim-user.js";

/**
 * Active: a member of the organization (not suspended there by offboarding) whose account is not
 * suspended. A person suspended here stays the organization's managed account (a User it lists).
 */
const selection = (organizationId: string) => ({
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
  member: sql<boolean>`exists (select 1 from ${orgMemberships} where ${orgMemberships.organizationId} = ${organizationId} and ${orgMemberships.userId} = ${users.id} and ${orgMemberships.deletedAt} is null)`,
});

type Row = { id: string; email: string; fullName: string | null; status: string; createdAt: Date; updatedAt: Date; externalId: string | null; givenName: string | null; familyName: string | null; displayName: string | null; version: number | null; scimUpdatedAt: Date | null; member: boolean | string };

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
    created: r.createdAt,
    lastModified,
    // Changes through SCIM bump the row's version; changes elsewhere (an admin's suspension) move the account's time.
    // (suspended here or reinstated by an admin: the membership's change shows in the version too).
    version: `${r.version ?? 0}-${r.updatedAt.getTime().toString(36)}${active(r) ? "" : "-i"}`,
  };
}

/**
 * The organization's managed accounts as SCIM Users: live accounts the organization manages (rule
 * 16), with what its SCIM client said about them (none for an account provisioned otherwise, e.g.
 * by enterprise sign-in). Always pinned to one organization.
 */
export const scimUsersRepository = {
  async listOf(db: Executor, organizationId: string): Promise<ScimUserRecord[]> {
    const rows = await db
      .select(selection(organizationId))
      .from(users)
      .leftJoin(scimUsers, and(eq(scimUsers.userId, users.id), eq(scimUsers.organizationId, organizationId)))
      .where(and(eq(users.managedByOrganizationId, organizationId), isNull(users.deletedAt)))
      .orderBy(asc(users.createdAt), asc(users.id));
    return rows.map(toRecord);
  },

  /** The organization's User with this (lower-cased) userName: the query every directory starts with. */
  async findByUserName(db: Executor, organizationId: string, email: string): Promise<ScimUserRecord[]> {
    const rows = await db
      .select(selection(organizationId))
      .from(users)
      .leftJoin(scimUsers, and(eq(scimUsers.userId, users.id), eq(scimUsers.organizationId, organizationId)))
      .where(and(eq(users.email, email), eq(users.managedByOrganizationId, organizationId), isNull(users.deletedAt)));
    return rows.map(toRecord);
  },

  async find(db: Executor, organizationId: string, userId: string): Promise<ScimUserRecord | undefined> {
    const [row] = await db
      .select(selection(organizationId))
      .from(users)
      .leftJoin(scimUsers, and(eq(scimUsers.userId, users.id), eq(scimUsers.organizationId, organizationId)))
      .where(and(eq(users.id, userId), eq(users.managedByOrganizationId, organizationId), isNull(users.deletedAt)));
    return row ? toRecord(row) : undefined;
  },

  /** Writes the client's fields (a new row, or the next version of the row). */
  async upsert(db: Executor, v: { organizationId: string; userId: string; externalId: string | null; givenName: string | null; familyName: string | null; displayName: string | null; now: Date }): Promise<void> {
    const values = { externalId: v.externalId, givenName: v.givenName, familyName: v.familyName, displayName: v.displayName, updatedAt: v.now };
    await db
      .insert(scimUsers)
      .values({ userId: v.userId, organizationId: v.organizationId, ...values, createdAt: v.now })
      .onConflictDoUpdate({ target: scimUsers.userId, set: { ...values, organizationId: v.organizationId, version: sql`${scimUsers.version} + 1` } });
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
