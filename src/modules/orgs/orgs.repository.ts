import { and, eq, inArray } from "drizzle-orm";
import { noteChanged } from "../../infra/announced-cache.js";
import { noteProfileChanged } from "../users/index.js";
import { organizations } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";
import { invitesRepository } from "./invites.repository.js";
import { membershipsRepository } from "./memberships.repository.js";

export const orgColumns = pickColumns(organizations, ["id", "name", "slug", "description", "logoUrl", "createdAt", "updatedAt"]);

export type OrgRow = Pick<typeof organizations.$inferSelect, keyof typeof orgColumns>;

export const orgsRepository = {
  async findById(db: Executor, id: string): Promise<OrgRow | undefined> {
    const [row] = await db.select(orgColumns).from(organizations).where(and(eq(organizations.id, id), live(organizations)));
    return row;
  },

  async findByIds(db: Executor, ids: string[]): Promise<OrgRow[]> {
    if (ids.length === 0) return [];
    return db.select(orgColumns).from(organizations).where(and(inArray(organizations.id, ids), live(organizations)));
  },

  async slugExists(db: Executor, slug: string): Promise<boolean> {
    const rows = await db.select({ id: organizations.id }).from(organizations).where(and(eq(organizations.slug, slug), live(organizations)));
    return rows.length > 0;
  },

  async insert(db: Executor, v: { name: string; slug: string; description?: string; logoUrl?: string; createdBy: string; now: Date }): Promise<OrgRow> {
    const [row] = await db
      .insert(organizations)
      .values({ name: v.name, slug: v.slug, description: v.description, logoUrl: v.logoUrl, createdBy: v.createdBy, createdAt: v.now, updatedAt: v.now })
      .returning(orgColumns);
    return row!;
  },

  async update(db: Executor, id: string, values: Partial<typeof organizations.$inferInsert>): Promise<OrgRow | undefined> {
    // Profiles name the organization managing the account; a deleted organization's OIDC clients stop with it.
    if (values.name !== undefined || values.deletedAt !== undefined) noteProfileChanged("*");
    if (values.deletedAt !== undefined) noteChanged("client", "*");
    // Members' organization lists show its name and slug (membership-cache.ts).
    if (values.name !== undefined || values.slug !== undefined || values.deletedAt !== undefined) noteChanged("memberships", "*");
    const [row] = await db.update(organizations).set(values).where(and(eq(organizations.id, id), live(organizations))).returning(orgColumns);
    return row;
  },

  /** Soft-deletes an organization with its memberships, and closes its open invites. */
  async softDelete(db: Executor, organizationId: string, now: Date) {
    await orgsRepository.update(db, organizationId, { deletedAt: now, updatedAt: now });
    await membershipsRepository.softDeleteAllOfOrg(db, organizationId, now);
    await invitesRepository.cancelAllOpen(db, organizationId, now);
  },
};
