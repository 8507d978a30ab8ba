import { and, asc, eq, inArray, isNotNull, lte, ne } from "drizzle-orm";
import { organizationDomains, organizations } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";
import { live } from "../../infra/soft-delete.js";

const t = organizationDomains;
const columns = pickColumns(t, [
  "id", "organizationId", "domain", "verificationToken", "status", "verifiedAt", "lastCheckedAt", "lastCheckError", "consecutiveFailures", "nextCheckAt", "createdBy", "createdAt", "updatedAt",
]);

export type DomainRow = Pick<typeof t.$inferSelect, keyof typeof columns>;
export type DomainStatus = "pending" | "verified" | "lapsed";

/** What a check changes on a row. */
export type DomainCheckValues = Partial<Pick<typeof t.$inferInsert, "status" | "verifiedAt" | "lastCheckedAt" | "lastCheckError" | "consecutiveFailures" | "nextCheckAt">>;

/** Organization domains, always within their organization except the cross-tenant questions named as such. */
export const domainsRepository = {
  listForOrganization: (db: Executor, organizationId: string): Promise<DomainRow[]> =>
    db.select(columns).from(t).where(and(eq(t.organizationId, organizationId), live(t))).orderBy(asc(t.domain), asc(t.createdAt)),

  async find(db: Executor, organizationId: string, id: string): Promise<DomainRow | undefined> {
    const [row] = await db.select(columns).from(t).where(and(idInOrg(t, organizationId, id), live(t)));
    return row;
  },

  /** The row, locked until the transaction ends: checks of one domain are applied one after the other. */
  async findForUpdate(db: Executor, id: string): Promise<DomainRow | undefined> {
    const [row] = await db.select(columns).from(t).where(and(eq(t.id, id), live(t))).for("update");
    return row;
  },

  async insert(db: Executor, v: { organizationId: string; domain: string; verificationToken: string; createdBy: string; now: Date }): Promise<DomainRow> {
    const [row] = await db
      .insert(t)
      .values({ organizationId: v.organizationId, domain: v.domain, verificationToken: v.verificationToken, createdBy: v.createdBy, createdAt: v.now, updatedAt: v.now })
      .returning(columns);
    return row!;
  },

  async update(db: Executor, id: string, values: DomainCheckValues & { updatedAt: Date }): Promise<DomainRow> {
    const [row] = await db.update(t).set(values).where(eq(t.id, id)).returning(columns);
    return row!;
  },

  async softDelete(db: Executor, organizationId: string, id: string, now: Date): Promise<DomainRow | undefined> {
    const [row] = await db.update(t).set({ deletedAt: now, updatedAt: now }).where(and(idInOrg(t, organizationId, id), live(t))).returning(columns);
    return row;
  },

  /** Whether another organization holds this name verified (cross-tenant, answers yes or no only). */
  async verifiedElsewhere(db: Executor, domain: string, organizationId: string): Promise<boolean> {
    const [row] = await db.select({ id: t.id }).from(t).where(and(eq(t.domain, domain), eq(t.status, "verified"), ne(t.organizationId, organizationId), live(t))).limit(1);
    return row !== undefined;
  },

  /** The live organization that holds this name verified, if one does. */
  async verifiedOwner(db: Executor, domain: string): Promise<string | null> {
    const [row] = await db
      .select({ organizationId: t.organizationId })
      .from(t)
      .innerJoin(organizations, and(eq(organizations.id, t.organizationId), live(organizations)))
      .where(and(eq(t.domain, domain), eq(t.status, "verified"), live(t)))
      .limit(1);
    return row?.organizationId ?? null;
  },

  /**
   * Claims on this name by organizations that were deleted since: released (soft-deleted), so a
   * verified claim does not outlive its organization and keep the name from everyone else.
   */
  releaseFromDeletedOrganizations: (db: Executor, domain: string, now: Date): Promise<DomainRow[]> =>
    db
      .update(t)
      .set({ deletedAt: now, updatedAt: now })
      .where(and(eq(t.domain, domain), live(t), inArray(t.organizationId, db.select({ id: organizations.id }).from(organizations).where(isNotNull(organizations.deletedAt)))))
      .returning(columns),

  async organizationIsLive(db: Executor, organizationId: string): Promise<boolean> {
    const [row] = await db.select({ id: organizations.id }).from(organizations).where(and(eq(organizations.id, organizationId), live(organizations)));
    return row !== undefined;
  },

  /**
   * Verified domains due for a re-check, claimed by moving their next check to `leaseUntil` in the
   * same statement: an instance that runs the job at the same moment skips them (SKIP LOCKED), and
   * one that dies mid-check leaves them due again when the lease ends.
   */
  claimDue: (db: Executor, now: Date, leaseUntil: Date, limit: number): Promise<DomainRow[]> =>
    db
      .update(t)
      .set({ nextCheckAt: leaseUntil })
      .where(
        inArray(
          t.id,
          db
            .select({ id: t.id })
            .from(t)
            .where(and(eq(t.status, "verified"), live(t), lte(t.nextCheckAt, now)))
            .orderBy(asc(t.nextCheckAt))
            .limit(limit)
            .for("update", { skipLocked: true }),
        ),
      )
      .returning(columns),
};
