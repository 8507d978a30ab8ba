import { and, count, desc, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import { auditLogs } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import { PgTransaction } from "drizzle-orm/pg-core";
import type { Db, Executor } from "../../infra/db.js";
import { isDependencyOutage } from "../../infra/db-errors.js";
import { placeholdersFor, placeholderValues, preparedQuery } from "../../infra/prepared.js";

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

const insertOne = preparedQuery("audit_insert", (db) => db.insert(auditLogs).values(placeholdersFor("r", ROW_FIELDS)));
/**
 * The rows of a JSON array of records (`auditRowsJson`) in every column of the table, in its order:
 * id and the chain's columns as a plain insert leaves them (a new id; unchained).
 */
const recordsFrom = (param: string) =>
  sql`select gen_random_uuid(), r.created_at, r.action, r.actor_id, r.user_id, r.organization_id, r.resource_type, r.resource_id,
        r.success, r.ip_address, r.user_agent, r.request_id, coalesce(r.metadata, '{}'::jsonb), r.error_message,
        null::bigint, null::varchar, null::varchar, null::bigint, null::varchar, null::varchar
      from jsonb_to_recordset(${sql.placeholder(param)}::jsonb) as r(created_at timestamptz, action varchar, actor_id uuid,
        user_id uuid, organization_id uuid, resource_type varchar, resource_id varchar, success boolean, ip_address varchar,
        user_agent text, request_id varchar, metadata jsonb, error_message text)`;
// Several records at once, from one JSON parameter (any number of rows, one prepared statement).
const insertMany = preparedQuery("audit_insert_many", (db) => db.insert(auditLogs).select(recordsFrom("rows")));

/**
 * The insert of several records as a CTE named `alias`, from the placeholder `<alias>_rows`: for a
 * repository that writes many changes and their records in one statement. Fill it with
 * `{ [`${alias}_rows`]: auditRowsJson(rows) }`.
 */
export const auditInsertManyAs = (db: Executor, alias: string) => db.$with(alias).as(db.insert(auditLogs).select(recordsFrom(`${alias}_rows`)));
export const auditRowsJson = (rows: readonly AuditRow[]): string => JSON.stringify(rows.map(asJson));
/**
 * The insert of records as a CTE named `alias` (placeholder `<alias>_rows`, as `auditInsertManyAs`),
 * written only when `condition` holds: for a statement whose change may find nothing to change
 * (the record then describes nothing and is not written). The condition may read an earlier CTE of
 * the same statement, which sees the change as it was made.
 */
export const auditInsertWhenAs = (db: Executor, alias: string, condition: SQL) =>
  db.$with(alias).as(db.insert(auditLogs).select(sql`${recordsFrom(`${alias}_rows`)} where ${condition}`));

// The column list of insertMany's select, in the table's order of ROW_FIELDS above.
const asJson = (r: AuditRow) => ({
  created_at: r.createdAt.toISOString(),
  action: r.action,
  actor_id: r.actorId,
  user_id: r.userId,
  organization_id: r.organizationId,
  resource_type: r.resourceType,
  resource_id: r.resourceId,
  success: r.success,
  ip_address: r.ipAddress,
  user_agent: r.userAgent,
  request_id: r.requestId,
  metadata: r.metadata,
  error_message: r.errorMessage,
});

/** Records written through the pool in one turn of the event loop go together, at most this many. */
const MAX_BATCH = 64;
interface Pending {
  row: AuditRow;
  resolve: () => void;
  reject: (e: unknown) => void;
}
const batches = new WeakMap<Db, { pending: Pending[] }>();

/**
 * Records written outside a transaction (failures, token issuance, sign-outs: nothing to commit
 * with) from requests that reach their write in the same turn of the event loop go as one statement:
 * one round trip and one commit for several requests instead of one each (group commit). Each
 * caller still waits until its own record is stored. A batch that fails is written again one record
 * at a time, so a record that cannot be stored fails its own caller only.
 */
function batchedInsert(db: Db, row: AuditRow): Promise<void> {
  let batch = batches.get(db);
  if (!batch) batches.set(db, (batch = { pending: [] }));
  const queue = batch;
  const flush = async () => {
    const taken = queue.pending;
    queue.pending = [];
    if (taken.length === 0) return;
    if (taken.length > 1) {
      try {
        await insertMany(db, { rows: auditRowsJson(taken.map((p) => p.row)) });
        for (const p of taken) p.resolve();
        return;
      } catch (e) {
        // The database unreachable: every caller learns so (a retry could store a record twice).
        if (isDependencyOutage(e)) {
          for (const p of taken) p.reject(e);
          return;
        }
        // A record it refused: one at a time below, so each caller learns of its own record only.
      }
    }
    await Promise.all(
      taken.map((p) =>
        insertOne(db, auditRowValues("r", p.row)).then(
          () => p.resolve(),
          (e: unknown) => p.reject(e),
        ),
      ),
    );
  };
  return new Promise<void>((resolve, reject) => {
    queue.pending.push({ row, resolve, reject });
    if (queue.pending.length === 1) setImmediate(() => void flush());
    else if (queue.pending.length >= MAX_BATCH) void flush();
  });
}

/** A position in an organization's activity: the (created_at, id) of the last record seen. */
export interface ActivityPosition {
  createdAt: Date;
  id: string;
}

/** The audit log: append-only (a trigger refuses UPDATE and DELETE), read newest first. */
export const auditRepository = {
  /** Appends one record: inside the caller's transaction, or through the pool with other requests' records (batchedInsert). */
  async insert(db: Executor, row: AuditRow): Promise<void> {
    if (db instanceof PgTransaction) await insertOne(db, auditRowValues("r", row));
    else await batchedInsert(db as Db, row);
  },

  /** Records about one user, newest first, one offset page with the total. */
  async listForUser(db: Executor, userId: string, filter: Omit<ActivityFilter, "userId"> & { limit: number; offset: number }) {
    return numberedPage(db, and(...activityWhere({ ...filter, userId })), filter);
  },

  /**
   * An organization's records, newest first, filterable by user and action, strictly after
   * `before` in that order. Keyset pagination on (created_at, id) walks an index, so page 1,000
   * costs what page 1 costs.
   */
  async listForOrganization(db: Executor, organizationId: string, filter: ActivityFilter & { before?: ActivityPosition; limit: number }): Promise<AuditEntryRow[]> {
    const where = organizationFilter(organizationId, filter);
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

  /**
   * The whole log (superadmins), or what the caller's `userId` filter narrows it to, newest first,
   * one numbered page with the total. `q` matches a substring of the action, resource, address or
   * user agent, case-insensitively (a scan: for people reading, not for scripts polling).
   */
  async listSystem(
    db: Executor,
    filter: ActivityFilter & { resourceType?: string; success?: boolean; q?: string; limit: number; offset: number },
  ): Promise<{ items: AuditEntryRow[]; total: number }> {
    const where = activityWhere(filter);
    if (filter.resourceType) where.push(eq(auditLogs.resourceType, filter.resourceType));
    if (filter.success !== undefined) where.push(eq(auditLogs.success, filter.success));
    if (filter.q) {
      // The caller's text is a literal: LIKE's own wildcards in it match themselves.
      const pattern = `%${filter.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.push(sql`concat_ws(' ', ${auditLogs.action}, ${auditLogs.resourceType}, ${auditLogs.resourceId}, ${auditLogs.ipAddress}, ${auditLogs.userAgent}) ilike ${pattern}`);
    }
    return numberedPage(db, where.length ? and(...where) : undefined, filter);
  },

  /** The same records as numbered pages (the original API's): an offset, and the total for `pages`. */
  async pageForOrganization(db: Executor, organizationId: string, filter: ActivityFilter & { limit: number; offset: number }): Promise<{ items: AuditEntryRow[]; total: number }> {
    return numberedPage(db, and(...organizationFilter(organizationId, filter)), filter);
  },
};

/** One numbered page of the records `where` selects, newest first (ties by id), with their total. */
async function numberedPage(db: Executor, where: SQL | undefined, page: { limit: number; offset: number }): Promise<{ items: AuditEntryRow[]; total: number }> {
  const [items, [total]] = await Promise.all([
    db.select(auditColumns).from(auditLogs).where(where).orderBy(desc(auditLogs.createdAt), desc(auditLogs.id)).limit(page.limit).offset(page.offset),
    db.select({ n: count() }).from(auditLogs).where(where),
  ]);
  return { items: items as AuditEntryRow[], total: total?.n ?? 0 };
}

/** Who did it, what, and when: `since` inclusive, `until` exclusive. */
export interface ActivityFilter {
  userId?: string;
  /** One resource's records (e.g. an offboarding receipt by its id). */
  resourceId?: string;
  /** One record by its own id. */
  recordId?: string;
  action?: string;
  since?: Date;
  until?: Date;
}

function activityWhere(filter: ActivityFilter): SQL[] {
  const where: SQL[] = [];
  if (filter.userId) where.push(eq(auditLogs.userId, filter.userId));
  if (filter.resourceId) where.push(eq(auditLogs.resourceId, filter.resourceId));
  if (filter.recordId) where.push(eq(auditLogs.id, filter.recordId));
  if (filter.action) where.push(eq(auditLogs.action, filter.action));
  if (filter.since) where.push(gte(auditLogs.createdAt, filter.since));
  if (filter.until) where.push(lt(auditLogs.createdAt, filter.until));
  return where;
}

function organizationFilter(organizationId: string, filter: ActivityFilter): SQL[] {
  return [eq(auditLogs.organizationId, organizationId), ...activityWhere(filter)];
}
