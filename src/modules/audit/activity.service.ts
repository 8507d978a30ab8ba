import type { Db } from "../../infra/db.js";
import { AppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { toPage, type Page } from "../../lib/pagination.js";
import { activityPageSchema, activitySchema, systemAuditQuerySchema, type ActivityInput, type SystemAuditQueryInput, type ActivityPageInput } from "./activity.schemas.js";
import { auditRepository, type ActivityPosition } from "./audit.repository.js";
import type { AuditEntryView } from "./audit.service.js";
import { requireOrgCaller, requireUser } from "../access/index.js";

const badCursor = () => new AppError("VALIDATION_ERROR", 400, "cursor: is not a cursor this API returned", { errors: [{ path: "cursor", message: "is not a cursor this API returned" }] });

const encodeCursor = (e: ActivityPosition) => Buffer.from(`${e.createdAt.toISOString()}|${e.id}`).toString("base64url");

// Exactly what encodeCursor writes: a four-digit-year ISO instant and a UUID. Anything looser
// (year 275760, "----…") parses here but fails as timestamptz or uuid in the query: a 500.
const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

function decodeCursor(cursor: string): ActivityPosition {
  const match = CURSOR.exec(Buffer.from(cursor, "base64url").toString());
  const createdAt = new Date(match?.[1] ?? "");
  if (!match || Number.isNaN(createdAt.getTime()) || createdAt.getUTCFullYear() < 1) throw badCursor();
  return { createdAt, id: match[2]! };
}

/**
 * An organization's activity (its audit records), newest first, filterable by user and action,
 * with an opaque keyset cursor. Members with `activity.read`, and the organization's API keys with
 * audit:read.
 */
export class ActivityService {
  constructor(private readonly db: Db) {}

  async list(ctx: RequestContext, orgId: string, input: ActivityInput): Promise<{ items: AuditEntryView[]; nextCursor: string | null }> {
    const { orgId: id } = await requireOrgCaller(this.db, ctx, orgId, "activity.read");
    const q = parseInput(activitySchema, input);
    const before = q.cursor ? decodeCursor(q.cursor) : undefined;
    // One row past the page tells whether there is a next one.
    const rows = await auditRepository.listForOrganization(this.db, id, { userId: q.userId, action: q.action, since: q.since, until: q.until, before, limit: q.limit + 1 });
    const items = rows.slice(0, q.limit);
    return { items, nextCursor: rows.length > q.limit ? encodeCursor(items.at(-1)!) : null };
  }

  /**
   * The system log (GET /audit-logs, as the original API had it): every record for a superadmin,
   * with its filters; anyone else gets their own records only, whatever user_id they name.
   */
  async systemLog(ctx: RequestContext, input: SystemAuditQueryInput): Promise<Page<AuditEntryView>> {
    const actor = requireUser(ctx);
    const q = parseInput(systemAuditQuerySchema, input);
    const userId = actor.isSuperadmin ? q.userId : actor.userId;
    const { items, total } = await auditRepository.listSystem(this.db, { ...q, userId, limit: q.perPage, offset: (q.page - 1) * q.perPage });
    return toPage(items, total, q.page, q.perPage);
  }

  /** The same records as the original API's numbered pages (?page=&per_page=), with the total. */
  async listPage(ctx: RequestContext, orgId: string, input: ActivityPageInput): Promise<Page<AuditEntryView>> {
    const { orgId: id } = await requireOrgCaller(this.db, ctx, orgId, "activity.read");
    const q = parseInput(activityPageSchema, input);
    const { items, total } = await auditRepository.pageForOrganization(this.db, id, { userId: q.userId, action: q.action, since: q.since, until: q.until, limit: q.perPage, offset: (q.page - 1) * q.perPage });
    return toPage(items, total, q.page, q.perPage);
  }
}
