import { and, count, desc, eq, sql } from "drizzle-orm";
import { emailOutbox } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";

export type OutboxStatus = (typeof emailOutbox.status.enumValues)[number];

/**
 * The email outbox: queued, sent and failed messages. The sealed props (they carry one-time links)
 * are written here and read back by outbox.secrets.repository.ts only.
 */
export const outboxRepository = {
  insert: (db: Executor, row: { template: string; toAddress: string; propsSealed: string; now: Date }) =>
    db
      .insert(emailOutbox)
      .values({ template: row.template, toAddress: row.toAddress, propsSealed: row.propsSealed, nextAttemptAt: row.now, createdAt: row.now })
      .returning({ id: emailOutbox.id }),

  markSent: (db: Executor, id: string, now: Date, provider: string, messageId: string | null) =>
    db
      .update(emailOutbox)
      .set({ status: "sent", sentAt: now, updatedAt: now, lockedUntil: null, provider, providerMessageId: messageId, lastError: null })
      .where(eq(emailOutbox.id, id)),

  markFailed: (db: Executor, id: string, now: Date, status: OutboxStatus, nextAttemptAt: Date, error: string) =>
    db
      .update(emailOutbox)
      .set({ status, nextAttemptAt, lockedUntil: null, updatedAt: now, lastError: error.slice(0, 2000) })
      .where(eq(emailOutbox.id, id)),

  list: (db: Executor, filter: { status?: OutboxStatus; limit: number; offset: number }) =>
    db
      .select(pickColumns(emailOutbox, ["id", "template", "toAddress", "status", "attempts", "nextAttemptAt", "lastError", "provider", "sentAt", "createdAt"]))
      .from(emailOutbox)
      .where(filter.status ? eq(emailOutbox.status, filter.status) : undefined)
      .orderBy(desc(emailOutbox.createdAt))
      .limit(filter.limit)
      .offset(filter.offset),

  async count(db: Executor, status?: OutboxStatus): Promise<number> {
    const [row] = await db.select({ n: count() }).from(emailOutbox).where(status ? eq(emailOutbox.status, status) : undefined);
    return row?.n ?? 0;
  },

  /** Puts a dead or failed message back in the queue with a fresh attempt budget. */
  requeue: (db: Executor, id: string, now: Date) =>
    db
      .update(emailOutbox)
      .set({ status: "pending", attempts: 0, nextAttemptAt: now, lockedUntil: null, updatedAt: now })
      .where(and(eq(emailOutbox.id, id), sql`${emailOutbox.status} in ('dead', 'failed')`))
      .returning({ id: emailOutbox.id }),
};
