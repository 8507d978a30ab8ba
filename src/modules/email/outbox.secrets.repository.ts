import { sql } from "drizzle-orm";
import { emailOutbox } from "../../../schema/index.js";
import { resultRows, type Executor } from "../../infra/db.js";

export interface ClaimedEmail {
  id: string;
  template: string;
  toAddress: string;
  propsSealed: string;
  attempts: number;
}

/**
 * Privileged (ARCHITECTURE rule 7): the sealed props of due messages (reset, verification and
 * invite links are in them). Only the email service's sender imports it (eslint.config.js
 * enforces it); the outbox admin lists messages without their props.
 *
 * Leases up to `limit` due messages. SKIP LOCKED lets many workers (and instances) drain the same
 * table without sending a message twice; the lease lets another worker retry it if this one dies.
 */
export async function claimDueEmailsPrivileged(db: Executor, now: Date, limit: number, leaseSeconds: number): Promise<ClaimedEmail[]> {
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
}
