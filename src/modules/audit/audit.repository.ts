import { and, count, desc, eq, sql, type SQL } from "drizzle-orm";
import { auditLogs } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { placeholdersFor, placeholderValues } from "../../infra/prepared.js";

/** What a reader sees of a record (everything but the error message, which stays in the table). */
export const auditColumns = pickColumns(auditLogs, ["id", "createdAt", "action", "actorId", "userId", "organizationId", "resourceType", "resourceId", "success", "ipAddress", "userAgent", "requestId", "metadata"]);

export type AuditEntryRow = Pick<typeof auditLogs.$inferSelect, keyof typeof auditColumns>;
export type AuditInsert = typeof auditLogs.$inferInsert;

/** The columns a new record sets; the others (id, the chain's columns) take their defaults. */
const ROW_FIELDS = ["createdAt", "action", "actorId", "userId", "organizationId", "resourceType", "resourceId", "success", "ipAddress", "userAgent", "requestId", "metadata", "errorMessage"] as const;
/** A new record: every column it sets, nulls spelled out (a prepared statement has no "default" for a missing value). */
export type AuditRow = Required<{ [K in (typeof ROW_FIELDS)[number]]: Exclude<AuditInsert[K], undefined> }>;

/**
 * The insert of one record as a CTE named `alias`, its values `sql.placeholder`s named
 * `<alias>.<column>`: a repository adds it to the statement that writes the change the record
 * describes (one statement: both or neither, one round trip, and preparable). Fill it with
 * `auditRowValues(alias, row)`.
 */
export const auditInsertAs = (db: Executor, alias: string) => db.$with(alias).as(db.insert(auditLogs).values(placeholdersFor(alias, ROW_FIELDS)));

export const auditRowValues = (alias: string, row: AuditRow, into?: Record<string, unknown>): Record<string, unknown> => placeholderValues(alias, ROW_FIELDS, row, into);

/** A position in an organization's activity: the (created_at, id) of the last record seen. */
export interface ActivityPosition {
  createdAt: Date;
  id: string;
}

/** The audit log: append-only (a trigger refuses UPDATE and DELETE), read newest first. */
export const auditRepository = {
  async insert(db: Executor, values: AuditInsert): Promise<void> {
    await db.insert(auditLogs).values(values);
  },

  /** Records about one user, newest first, one offset page with the total. */
  async listForUser(db: Executor, userId: string, filter: { action?: string; limit: number; offset: number }) {
    const where: SQL[] = [eq(auditLogs.userId, userId)];
    if (filter.action) where.push(eq(auditLogs.action, filter.action));
    const [items, [total]] = await Promise.all([
      db
        .select(auditColumns)
        .from(auditLogs)
        .where(and(...where))
        .orderBy(desc(auditLogs.createdAt))
        .limit(filter.limit)
        .offset(filter.offset),
      db.select({ n: count() }).from(auditLogs).where(and(...where)),
    ]);
    return { items: items as AuditEntryRow[], total: total?.n ?? 0 };
  },

  /**
   * An organization's records, newest first, filterable by user and action, strictly after
   * `before` in that order. Keyset pagination on (created_at, id) walks an index, so page 1,000
   * costs what page 1 costs.
   */
  async listForOrganization(db: Executor, organizationId: string, filter: { userId?: string; action?: string; before?: ActivityPosition; limit: number }): Promise<AuditEntryRow[]> {
    const where: SQL[] = [eq(auditLogs.organizationId, organizationId)];
    if (filter.userId) where.push(eq(auditLogs.userId, filter.userId));
    if (filter.action) where.push(eq(auditLogs.action, filter.action));
    if (filter.before) {
      // A row comparison, not an OR: PostgreSQL turns it into an index range start.
      where.push(sql`(${auditLogs.createdAt}, ${auditLogs.id}) < (${filter.before.createdAt.toISOString()}::timestamptz, ${filter.before.id}::uuid)`);
    }
    return (await db
      .select(auditColumns)
      .from(auditLogs)
      .where(and(...where))
      .orderBy(desc(auditLogs.createdAt), desc(auditLogs.id))
      .limit(filter.limit)) as AuditEntryRow[];
  },
};
