import { and, count, desc, eq, sql } from "drizzle-orm";
import { emailOutbox } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import { resultRows, type Executor } from "../../infra/db.js";

export interface ClaimedEmail {
  id: string;
  template: string;
  toAddress: string;
  propsSealed: string;
  attempts: number;
}

export type OutboxStatus = (typeof emailOutbox.status.enumValues)[number];

export const outboxRepository = {
  insert: (db: Executor, row: { template: string; toAddress: string; propsSealed: string; now: Date }) =>
    db
      .insert(emailOutbox)
      .values({ template: row.template, toAddress: row.toAddress, propsSealed: row.propsSealed, nextAttemptAt: row.now, createdAt: row.now })
      .returning({ id: emailOutbox.id }),

  /**
   * Leases up to `limit` due messages. SKIP LOCKED lets many workers (and instances) drain the same
   * table without sending a message twice; the lease lets another worker retry it if this one dies.
   */
  async claimDue(db: Executor, now: Date, limit: number, leaseSeconds: number): Promise<ClaimedEmail[]> {
    // Raw SQL parameters: timestamps as ISO strings (postgres-js does not serialise Date here).
    const at = now.toISOString();
    const until = new Date(now.getTime() + leaseSeconds * 1000).toISOString();
    const result = await db.execute(sql`
      update ${emailOutbox} set
        locked_until = ${until}::timestamptz,
        attempts = attempts + 1,
        updated_at = ${at}::timestamptz
      where id in (
        select id from ${emailOutbox}
        where status = 'pending' and next_attempt_at <= ${at}::timestamptz
          and (locked_until is null or locked_until <= ${at}::timestamptz)
        order by next_attempt_at
        limit ${limit}
        for update skip locked
      )
      returning id, template, to_address, props_sealed, attempts`);
    return resultRows<Record<string, unknown>>(result).map((r) => ({
      id: r.id as string,
      template: r.template as string,
      toAddress: r.to_address as string,
      propsSealed: r.props_sealed as string,
      attempts: Number(r.attempts),
    }));
  },

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
