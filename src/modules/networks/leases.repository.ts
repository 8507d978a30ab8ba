import { and, eq, lte } from "drizzle-orm";
import { jobLeases } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";

/** Named job leases: one instance runs a network job at a time. */
export const leasesRepository = {
  /** Takes the named lease until `until` if it is free or lapsed: true for exactly one caller per lapse. */
  async claimLease(db: Executor, name: string, holder: string, now: Date, until: Date): Promise<boolean> {
    await db.insert(jobLeases).values({ name, holder, expiresAt: new Date(0) }).onConflictDoNothing();
    const rows = await db
      .update(jobLeases)
      .set({ holder, expiresAt: until, lastRunAt: now })
      .where(and(eq(jobLeases.name, name), lte(jobLeases.expiresAt, now)))
      .returning({ name: jobLeases.name });
    return rows.length === 1;
  },
};
