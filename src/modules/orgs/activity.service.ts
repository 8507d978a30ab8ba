import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import { auditLogs } from "../../../schema/index.js";
import type { Db } from "../../infra/db.js";
import { AppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import type { AuditEntryView } from "../audit/audit.service.js";
import { auditColumns } from "../audit/audit.service.js";
import { requireOrgAccess } from "./org-access.js";
import { activitySchema } from "./orgs.schemas.js";

const badCursor = () => new AppError("VALIDATION_ERROR", 400, "cursor: is not a cursor this API returned", { errors: [{ path: "cursor", message: "is not a cursor this API returned" }] });

const encodeCursor = (e: { createdAt: Date; id: string }) => Buffer.from(`${e.createdAt.toISOString()}|${e.id}`).toString("base64url");

// Exactly what encodeCursor writes: a four-digit-year ISO instant and a UUID. Anything looser
// (year 275760, "----…") parses here but fails as timestamptz or uuid in the query: a 500.
const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const match = CURSOR.exec(Buffer.from(cursor, "base64url").toString());
  const createdAt = new Date(match?.[1] ?? "");
  if (!match || Number.isNaN(createdAt.getTime()) || createdAt.getUTCFullYear() < 1) throw badCursor();
  return { createdAt, id: match[2]! };
}

/**
 * An organization's activity (its audit records), newest first, filterable by user and action.
 * Keyset pagination on (created_at, id) walks an index, so page 1,000 costs what page 1 costs.
 */
export class ActivityService {
  constructor(private readonly db: Db) {}

  async list(ctx: RequestContext, orgId: string, input: unknown): Promise<{ items: AuditEntryView[]; nextCursor: string | null }> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "activity.read");
    const q = parseInput(activitySchema, input);
    const where: SQL[] = [eq(auditLogs.organizationId, id)];
    if (q.userId) where.push(eq(auditLogs.userId, q.userId));
    if (q.action) where.push(eq(auditLogs.action, q.action));
    if (q.cursor) {
      const c = decodeCursor(q.cursor);
      // A row comparison, not an OR: PostgreSQL turns it into an index range start.
      where.push(sql`(${auditLogs.createdAt}, ${auditLogs.id}) < (${c.createdAt.toISOString()}::timestamptz, ${c.id}::uuid)`);
    }
    const rows = (await this.db
      .select(auditColumns)
      .from(auditLogs)
      .where(and(...where))
      .orderBy(desc(auditLogs.createdAt), desc(auditLogs.id))
      .limit(q.limit + 1)) as AuditEntryView[];
    const items = rows.slice(0, q.limit);
    return { items, nextCursor: rows.length > q.limit ? encodeCursor(items.at(-1)!) : null };
  }
}
