import { and, asc, count, eq, ilike, inArray, or, sql, type SQL } from "drizzle-orm";
import { orgMemberships, organizations, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";
import { orgColumns, type OrgRow } from "./orgs.repository.js";

const escapeLike = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Live members of the organization in the row being read (a correlated count: one statement for the
 * whole page). The outer column is named in full: a one-table select leaves its own columns unqualified.
 */
const memberCount = sql<number>`(select count(*)::int from ${orgMemberships} m join ${users} u on u.id = m.user_id
  where m.organization_id = "organizations"."id" and m.deleted_at is null and u.deleted_at is null)`;

/** Every organization of the installation, for its operators (superadmins). */
export const allOrgsRepository = {
  /** A page of live organizations by name, whose name or slug contains `text`, each with its member count. */
  async page(db: Executor, q: { text?: string; limit: number; offset: number }): Promise<{ rows: Array<OrgRow & { memberCount: number }>; total: number }> {
    const where: SQL[] = [live(organizations)];
    if (q.text) {
      const pattern = `%${escapeLike(q.text)}%`;
      where.push(or(ilike(organizations.name, pattern), ilike(organizations.slug, pattern))!);
    }
    const [rows, [total]] = await Promise.all([
      db.select({ ...orgColumns, memberCount }).from(organizations).where(and(...where)).orderBy(asc(organizations.name), asc(organizations.slug)).limit(q.limit).offset(q.offset),
      db.select({ n: count() }).from(organizations).where(and(...where)),
    ]);
    return { rows, total: total?.n ?? 0 };
  },

  /** The owners of these organizations (one statement; stored role: owner is never lent by a role grant). */
  async ownersOf(db: Executor, organizationIds: string[]): Promise<Array<{ organizationId: string; id: string; email: string; fullName: string | null }>> {
    if (organizationIds.length === 0) return [];
    return db
      .select({ organizationId: orgMemberships.organizationId, id: users.id, email: users.email, fullName: users.fullName })
      .from(orgMemberships)
      .innerJoin(users, eq(users.id, orgMemberships.userId))
      .where(and(inArray(orgMemberships.organizationId, organizationIds), eq(orgMemberships.role, "owner"), live(orgMemberships), live(users)))
      .orderBy(asc(users.email));
  },
};
