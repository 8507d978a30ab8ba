import { and, count, eq } from "drizzle-orm";
import { orgMemberships, organizations, users } from "../../../schema/index.js";
import { noteChanged } from "../../infra/announced-cache.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";
import type { OrgRole } from "../access/index.js";

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

  /** Inserts unless a live membership exists (a concurrent writer's included); true when inserted. */
  async insertIfAbsent(db: Executor, v: { organizationId: string; userId: string; role: OrgRole; now: Date }): Promise<boolean> {
    noteMemberships(v.userId);
    const rows = await db
      .insert(orgMemberships)
      .values({ organizationId: v.organizationId, userId: v.userId, role: v.role, invitedBy: null, joinedAt: v.now, createdAt: v.now, updatedAt: v.now })
      .onConflictDoNothing()
      .returning({ id: orgMemberships.id });
    return rows.length === 1;
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

  /** Owners by the stored role (org_memberships.role): owner is never lent by a role grant. */
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

  /** Members with their user fields, for listings: `role` is the stored role (what a role change changes), not one lent by a grant. */
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
