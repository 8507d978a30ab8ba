import { and, eq, gt, isNull, or, sql, type SQL } from "drizzle-orm";
import { oidcPayloads } from "../../schema/index.js";
import type { Db } from "../infra/db.js";
import { auditInsertManyAs, auditRowsJson, type AuditRow } from "../modules/audit/index.js";

// The rows the OIDC adapter writes, how they go into a statement, and the statements for every
// model. A refresh token's own statements (rotation, its retry, a reused grant) are in
// refresh-statements.ts, built on what this file exports.

/** One provider model row as the adapter writes it (`id` is the row key, see adapter.ts). */
export interface PayloadRow {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  grantId: string | null;
  userCode: string | null;
  uid: string | null;
  expiresAt: Date | null;
}

/** A refresh token's record (oidc_refresh_tokens), all but the access token issued with it. */
export interface RefreshRecord {
  id: string;
  grantId: string;
  clientId: string;
  accountId: string | null;
  expiresAt: Date | null;
  createdAt: Date;
}

/** A saved model replaces the row of the same type and key: a re-saved grant or session. */
export const target = [oidcPayloads.type, oidcPayloads.id];
export const replaced = { payload: sql`excluded.payload`, grantId: sql`excluded.grant_id`, userCode: sql`excluded.user_code`, uid: sql`excluded.uid`, expiresAt: sql`excluded.expires_at` };

/** A named placeholder of a prepared statement. */
export const ph = (name: string) => sql.placeholder(name);
// jsonb and timestamptz go as text with a cast: the columns' own encoders would not take a null.
const payloadPlaceholders = (p: string) => ({
  id: ph(`${p}_id`),
  type: ph(`${p}_type`),
  payload: sql`${ph(`${p}_payload`)}::jsonb`,
  grantId: ph(`${p}_grant_id`),
  userCode: ph(`${p}_user_code`),
  uid: ph(`${p}_uid`),
  expiresAt: sql`${ph(`${p}_expires_at`)}::timestamptz`,
});
/** A row's values for the placeholders of its prefix `p` (see payloadPlaceholders). */
export const payloadValues = (p: string, r: PayloadRow) => ({
  [`${p}_id`]: r.id,
  [`${p}_type`]: r.type,
  [`${p}_payload`]: JSON.stringify(r.payload),
  [`${p}_grant_id`]: r.grantId,
  [`${p}_user_code`]: r.userCode,
  [`${p}_uid`]: r.uid,
  [`${p}_expires_at`]: r.expiresAt?.toISOString() ?? null,
});

/**
 * The adapter's statements for every model: find, save (one row, or many with their audit records),
 * consume once, a model's grant. The ones every grant runs (find, save) are built and prepared once:
 * building a statement costs more CPU than PostgreSQL spends running it. The rarer shapes are built
 * when needed, as SQL that `run` joins into one statement. A refresh token's own statements are in
 * refresh-statements.ts.
 */
export function adapterStatements(db: Db) {
  const find = db
    .select({ payload: oidcPayloads.payload, consumedAt: oidcPayloads.consumedAt })
    .from(oidcPayloads)
    .where(and(eq(oidcPayloads.type, ph("type")), eq(oidcPayloads.id, ph("id")), or(isNull(oidcPayloads.expiresAt), gt(oidcPayloads.expiresAt, ph("now")))))
    .prepare("oidc_payload_find");

  const save = db.insert(oidcPayloads).values(payloadPlaceholders("s")).onConflictDoUpdate({ target, set: replaced }).prepare("oidc_payload_save");
  // Several new rows at once, in the table's column order (see saveMany).
  const rowsFrom = sql`select r.id, r.type, r.payload, r.grant_id, r.user_code, r.uid, r.expires_at, null::timestamptz
        from jsonb_to_recordset(${ph("rows")}::jsonb) as r(id varchar, type varchar, payload jsonb, grant_id varchar, user_code varchar, uid varchar, expires_at timestamptz)`;
  const saveMany = db.insert(oidcPayloads).select(rowsFrom).onConflictDoUpdate({ target, set: replaced }).prepare("oidc_payload_save_many");
  // ...and the audit records of the requests that issued them, in the same statement (both or neither).
  const saveManyAudited = db
    .with(auditInsertManyAs(db, "audit"))
    .insert(oidcPayloads)
    .select(rowsFrom)
    .onConflictDoUpdate({ target, set: replaced })
    .prepare("oidc_payload_save_many_audited");

  return {
    find: (v: { type: string; id: string; now: Date }) => find.execute({ type: v.type, id: v.id, now: v.now.toISOString() }),
    save: (r: PayloadRow) => save.execute(payloadValues("s", r)),
    /** Rows of distinct keys, with the audit records of the requests that issued them (if any), one statement. */
    saveMany: (rows: PayloadRow[], audit: AuditRow[] = []) => {
      const values = { rows: JSON.stringify(rows.map((r) => ({ id: r.id, type: r.type, payload: r.payload, grant_id: r.grantId, user_code: r.userCode, uid: r.uid, expires_at: r.expiresAt?.toISOString() ?? null }))) };
      return audit.length > 0 ? saveManyAudited.execute({ ...values, audit_rows: auditRowsJson(audit) }) : saveMany.execute(values);
    },
    /** Marks a code consumed if it is not yet: true when this call consumed it. */
    consumeOnce: async (type: string, key: string, at: Date): Promise<boolean> => {
      const rows = await db
        .update(oidcPayloads)
        .set({ consumedAt: at })
        .where(and(eq(oidcPayloads.type, type), eq(oidcPayloads.id, key), isNull(oidcPayloads.consumedAt)))
        .returning({ id: oidcPayloads.id });
      return rows.length > 0;
    },
    /** The grant a stored model belongs to: undefined when it names none, null when there is no such row. */
    grantOfPayload: async (type: string, key: string): Promise<string | undefined | null> => {
      const [row] = await db.select({ grantId: oidcPayloads.grantId }).from(oidcPayloads).where(and(eq(oidcPayloads.type, type), eq(oidcPayloads.id, key)));
      return row ? (row.grantId ?? undefined) : null;
    },
    saveSql: (r: PayloadRow): SQL => db.insert(oidcPayloads).values(r).onConflictDoUpdate({ target, set: replaced }).getSQL(),
    /** Writes as one statement: each part a data-modifying CTE, `last` the main statement. */
    run: async (parts: SQL[], last: SQL): Promise<void> => {
      await db.execute(parts.length === 0 ? last : sql`with ${sql.join(parts.map((p, i) => sql`${sql.raw(`w${i}`)} as (${p})`), sql`, `)} ${last}`);
    },
  };
}
