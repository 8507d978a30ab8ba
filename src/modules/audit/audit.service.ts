import type { Clock } from "../../infra/clock.js";
import type { Executor } from "../../infra/db.js";
import { redact } from "../../lib/redact.js";
import type { RequestContext } from "../../lib/request-context.js";
import type { AuditActionName } from "./audit.actions.js";
import { auditRepository, type AuditEntryRow, type AuditRow } from "./audit.repository.js";

export interface AuditDetails {
  userId?: string | null;
  organizationId?: string | null;
  resourceType?: string;
  resourceId?: string;
  success?: boolean;
  metadata?: Record<string, unknown>;
  errorMessage?: string;
}

/** Hears every record as it is written (the outcome counters: audit-metrics.ts). */
export type AuditObserver = (action: AuditActionName, details: AuditDetails) => void;

/** A record ready to be written, and what to call once it is. */
export interface AuditEntry {
  row: AuditRow;
  written(): void;
}

/** One record as readers see it: the row's named columns, nothing else. */
export type AuditEntryView = AuditEntryRow;

/** A caller acting with a role held through a role grant (issue 37): the record names both roles and the grant's end. */
const elevationOf = (ctx: RequestContext, organizationId: string | null | undefined) =>
  ctx.elevation && organizationId && ctx.elevation.organizationId === organizationId
    ? { elevation: { role: ctx.elevation.role, stored_role: ctx.elevation.storedRole, until: ctx.elevation.until } }
    : {};

export class AuditService {
  constructor(
    private readonly clock: Clock,
    private readonly observe?: AuditObserver,
  ) {}

  /**
   * Appends one record. Pass the business transaction so the record commits (or not) with the
   * change it describes; pass the pool for failures that roll nothing back (e.g. a bad password).
   */
  async record(db: Executor, ctx: RequestContext, action: AuditActionName, details: AuditDetails = {}): Promise<void> {
    await this.write(db, this.entry(ctx, action, details));
  }

  /** Appends a record made by `entry` (one made before it was known whether a statement of its own would carry it). */
  async write(db: Executor, entry: AuditEntry): Promise<void> {
    await auditRepository.insert(db, entry.row);
    entry.written();
  }

  /**
   * The record `record` would append, for a caller that writes it inside a statement of its own
   * (one statement for a change and its record, see `auditInsertAs`): the same row, and `written()`
   * to call once the statement has run.
   */
  entry(ctx: RequestContext, action: AuditActionName, details: AuditDetails = {}): AuditEntry {
    const actorId = ctx.actor.kind === "user" ? ctx.actor.userId : null;
    // A record made by an organization API key names the key (it has no user id to put in actor_id).
    const byKey = ctx.actor.kind === "apiKey" ? { actor: { kind: "api_key", key_id: ctx.actor.keyId, prefix: ctx.actor.prefix } } : {};
    const row: AuditRow = {
      createdAt: this.clock.now(),
      action,
      actorId,
      userId: details.userId === undefined ? actorId : details.userId,
      organizationId: details.organizationId ?? null,
      resourceType: details.resourceType ?? null,
      resourceId: details.resourceId ?? null,
      success: details.success ?? true,
      ipAddress: ctx.ip?.slice(0, 45) ?? null,
      userAgent: ctx.userAgent?.slice(0, 1000) ?? null,
      requestId: ctx.requestId.slice(0, 128),
      metadata: { ...redact(details.metadata ?? {}), ...byKey, ...elevationOf(ctx, details.organizationId) },
      errorMessage: details.errorMessage ?? null,
    };
    // Outcome metrics count what was written (a rolled-back transaction may still have counted).
    return { row, written: () => this.observe?.(action, details) };
  }

  /** An organization's records, newest first, by action, user or resource (offboarding receipts), one page at a time. */
  async listForOrganization(db: Executor, organizationId: string, filter: { action?: AuditActionName; userId?: string; resourceId?: string; recordId?: string; page: number; perPage: number }): Promise<{ items: AuditEntryView[]; total: number }> {
    const { page, perPage, ...where } = filter;
    return auditRepository.pageForOrganization(db, organizationId, { ...where, limit: perPage, offset: (page - 1) * perPage });
  }

  /** Records about one user, newest first (their own activity log), one page at a time. */
  async listForUser(db: Executor, userId: string, filter: { action?: string; since?: Date; until?: Date; page: number; perPage: number }): Promise<{ items: AuditEntryView[]; total: number }> {
    return auditRepository.listForUser(db, userId, { action: filter.action, since: filter.since, until: filter.until, limit: filter.perPage, offset: (filter.page - 1) * filter.perPage });
  }
}
