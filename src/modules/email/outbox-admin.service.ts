import { z } from "zod";
import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { AppError } from "../../lib/errors.js";
import { paginationSchema, toPage } from "../../lib/pagination.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { outboxRepository } from "./outbox.repository.js";
import { requireSuperadmin } from "../access/index.js";

export const outboxListSchema = paginationSchema.extend({ status: z.enum(["pending", "sent", "failed", "dead"]).optional() });
export type OutboxListInput = z.input<typeof outboxListSchema>;
const notRetryable = () => new AppError("EMAIL_NOT_RETRYABLE", 404, "No dead or failed message with that id");

/** Superadmins watch the outbox and put dead or failed messages back in the queue. */
export class OutboxAdminService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async list(ctx: RequestContext, input: OutboxListInput) {
    requireSuperadmin(ctx);
    const q = parseInput(outboxListSchema, input ?? {});
    const [items, total] = await Promise.all([
      outboxRepository.list(this.db, { status: q.status, limit: q.perPage, offset: (q.page - 1) * q.perPage }),
      outboxRepository.count(this.db, q.status),
    ]);
    return toPage(items, total, q.page, q.perPage);
  }

  async retry(ctx: RequestContext, emailId: string): Promise<{ id: string }> {
    requireSuperadmin(ctx);
    const id = parseId(emailId, notRetryable);
    return this.db.transaction(async (tx) => {
      const [row] = await outboxRepository.requeue(tx, id, this.clock.now());
      if (!row) throw notRetryable();
      await this.audit.record(tx, ctx, AuditAction.emailRetried, { resourceType: "email", resourceId: id });
      return row;
    });
  }
}
