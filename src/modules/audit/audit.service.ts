import { and, count, desc, eq, type SQL } from "drizzle-orm";
import { auditLogs } from "../../../schema/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Executor } from "../../infra/db.js";
import { redact } from "../../lib/redact.js";
import type { RequestContext } from "../../lib/request-context.js";
import type { AuditActionName } from "./audit.actions.js";

export interface AuditDetails {
  userId?: string | null;
  organizationId?: string | null;
  resourceType?: string;
  resourceId?: string;
  success?: boolean;
  metadata?: Record<string, unknown>;
  errorMessage?: string;
}

export interface AuditEntryView {
  id: string;
  createdAt: Date;
  action: string;
  actorId: string | null;
  userId: string | null;
  organizationId: string | null;
  resourceType: string | null;
  resourceId: string | null;
  success: boolean;
  ipAddress: string | null;
  userAgent: string | null;
  requestId: string | null;
  metadata: Record<string, unknown>;
}

export const auditColumns = {
  id: auditLogs.id,
  createdAt: auditLogs.createdAt,
  action: auditLogs.action,
  actorId: auditLogs.actorId,
  userId: auditLogs.userId,
  organizationId: auditLogs.organizationId,
  resourceType: auditLogs.resourceType,
  resourceId: auditLogs.resourceId,
  success: auditLogs.success,
  ipAddress: auditLogs.ipAddress,
  userAgent: auditLogs.userAgent,
  requestId: auditLogs.requestId,
  metadata: auditLogs.metadata,
};

export class AuditService {
  constructor(private readonly clock: Clock) {}

  /**
   * Appends one record. Pass the business transaction so the record commits (or not) with the
   * change it describes; pass the pool for failures that roll nothing back (e.g. a bad password).
   */
  async record(db: Executor, ctx: RequestContext, action: AuditActionName, details: AuditDetails = {}): Promise<void> {
    const actorId = ctx.actor.kind === "user" ? ctx.actor.userId : null;
    await db.insert(auditLogs).values({
      createdAt: this.clock.now(),
      action,
      actorId,
      userId: details.userId === undefined ? actorId : details.userId,
      organizationId: details.organizationId ?? null,
      resourceType: details.resourceType,
      resourceId: details.resourceId,
      success: details.success ?? true,
      ipAddress: ctx.ip?.slice(0, 45) ?? null,
      userAgent: ctx.userAgent?.slice(0, 1000) ?? null,
      requestId: ctx.requestId.slice(0, 128),
      metadata: redact(details.metadata ?? {}),
      errorMessage: details.errorMessage,
    });
  }

  /** Records about one user, newest first (their own activity log), one page at a time. */
  async listForUser(db: Executor, userId: string, filter: { action?: string; page: number; perPage: number }) {
    const where: SQL[] = [eq(auditLogs.userId, userId)];
    if (filter.action) where.push(eq(auditLogs.action, filter.action));
    const [items, [total]] = await Promise.all([
      db
        .select(auditColumns)
        .from(auditLogs)
        .where(and(...where))
        .orderBy(desc(auditLogs.createdAt))
        .limit(filter.perPage)
        .offset((filter.page - 1) * filter.perPage) as Promise<AuditEntryView[]>,
      db.select({ n: count() }).from(auditLogs).where(and(...where)),
    ]);
    return { items, total: total?.n ?? 0 };
  }
}
