import { and, eq, gt, gte, isNull, or, sql, type SQL } from "drizzle-orm";
import { oidcPayloads, oidcRefreshTokens } from "../../schema/index.js";
import type { Db } from "../infra/db.js";
import { auditInsertManyAs, auditInsertWhenAs, auditRowsJson, type AuditRow } from "../modules/audit/index.js";

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

/** A refresh-token rotation in its usual shape: the spent token, its successor and the access token issued with it. */
export interface RotationValues {
  spent: { key: string; at: Date };
  successor: PayloadRow;
  record: RefreshRecord;
  accessToken: PayloadRow;
  /** The audit record of the answer that issues them (none, or one), written only with them. */
  audit: AuditRow[];
}

/**
 * A rotation retried (see adapter.ts, "a lost answer"): the token spent at or after `since` is
 * rotated again, and `replaced`, the successor it was given then, is retired. `spent.at` is when.
 */
export interface RetryValues extends RotationValues {
  replaced: string;
  since: Date;
}

// A saved model replaces the row of the same type and key: a re-saved grant or session.
const target = [oidcPayloads.type, oidcPayloads.id];
const replaced = { payload: sql`excluded.payload`, grantId: sql`excluded.grant_id`, userCode: sql`excluded.user_code`, uid: sql`excluded.uid`, expiresAt: sql`excluded.expires_at` };

const ph = (name: string) => sql.placeholder(name);
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
const payloadValues = (p: string, r: PayloadRow) => ({
  [`${p}_id`]: r.id,
  [`${p}_type`]: r.type,
  [`${p}_payload`]: JSON.stringify(r.payload),
  [`${p}_grant_id`]: r.grantId,
  [`${p}_user_code`]: r.userCode,
  [`${p}_uid`]: r.uid,
  [`${p}_expires_at`]: r.expiresAt?.toISOString() ?? null,
});

/**
 * The adapter's statements. The ones every grant runs (find, save, a rotation) are built and
 * prepared once: building a statement costs more CPU than PostgreSQL spends running it. The rarer
 * shapes are built when needed, as SQL that `run` joins into one statement.
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

  // One statement, so a rotation is written whole or not at all (see adapter.ts, Issuance.rotation).
  // The old token is spent only if nobody spent it first: two requests presenting the same token
  // at once both read it unspent, and only the first to write rotates it. The second's update then
  // finds nothing, so its successor, access token and record are not written (each is inserted
  // only `where exists (select 1 from spent_payload)`), and the statement returns no row.
  const spentAt = sql`${ph("spent_at")}::timestamptz`;
  const spentHere = sql`exists (select 1 from spent_payload)`;
  // A payload row from placeholders, in the table's column order, only if the old token was spent here.
  const payloadIf = (p: string, condition: SQL) =>
    sql`select ${ph(`${p}_id`)}::varchar, ${ph(`${p}_type`)}::varchar, ${ph(`${p}_payload`)}::jsonb, ${ph(`${p}_grant_id`)}::varchar,
        ${ph(`${p}_user_code`)}::varchar, ${ph(`${p}_uid`)}::varchar, ${ph(`${p}_expires_at`)}::timestamptz, null::timestamptz where ${condition}`;
  const payloadIfSpent = (p: string) => payloadIf(p, spentHere);
  // The successor's record, in the table's column order: id, grant, client, account, access token,
  // expiry, consumed, created, successor.
  const recordIfSpent = sql`select ${ph("r_id")}::varchar, ${ph("record_grant_id")}::varchar, ${ph("record_client_id")}::varchar, ${ph("record_account_id")}::varchar,
        ${ph("a_id")}::varchar, ${ph("record_expires_at")}::timestamptz, null::timestamptz, ${ph("record_created_at")}::timestamptz, null::varchar`;
  const rotate = db
    .with(
      db
        .$with("spent_payload")
        .as(
          db
            .update(oidcPayloads)
            .set({ consumedAt: spentAt })
            .where(and(eq(oidcPayloads.type, "RefreshToken"), eq(oidcPayloads.id, ph("spent")), isNull(oidcPayloads.consumedAt)))
            .returning({ id: oidcPayloads.id }),
        ),
      // The spent token's record names its successor: a retry may replace that one while it is unused.
      db
        .$with("spent_record")
        .as(db.update(oidcRefreshTokens).set({ consumedAt: spentAt, successorId: sql`${ph("r_id")}::varchar` }).where(and(eq(oidcRefreshTokens.id, ph("spent")), spentHere))),
      db.$with("successor").as(db.insert(oidcPayloads).select(payloadIfSpent("r")).onConflictDoUpdate({ target, set: replaced })),
      db.$with("access_token").as(db.insert(oidcPayloads).select(payloadIfSpent("a")).onConflictDoUpdate({ target, set: replaced })),
      // The answer's audit record: written with the rotation, or not at all (one round trip, one commit).
      auditInsertWhenAs(db, "audit", spentHere),
    )
    .insert(oidcRefreshTokens)
    .select(sql`${recordIfSpent} where ${spentHere}`)
    .onConflictDoNothing()
    .returning({ id: oidcRefreshTokens.id })
    .prepare("oidc_refresh_rotate");

  // A retry of a rotation whose answer was lost (see adapter.ts): the token, spent at or after
  // `since`, presented again while the successor it was given then (`replaced`) is still unused.
  // One statement, as a rotation: the unused successor retired (marked spent, the access token
  // issued with it deleted), the spent token's record made to name the new successor, and the new
  // successor, its access token and its record stored. The successor row is where a retry meets
  // every other use of it: its own rotation and other retries all spend it only where it is still
  // unspent, so of those that run at once exactly one writes and the others find it spent and
  // write nothing (each part below is conditioned on the retirement, as a rotation on its spend).
  const retiredHere = sql`exists (select 1 from retired)`;
  const renamedHere = sql`exists (select 1 from renamed)`;
  const rotateAgain = db
    .with(
      db
        .$with("retired")
        .as(
          db
            .update(oidcPayloads)
            .set({ consumedAt: spentAt })
            .where(
              and(
                eq(oidcPayloads.type, "RefreshToken"),
                eq(oidcPayloads.id, ph("replaced")),
                isNull(oidcPayloads.consumedAt),
                sql`exists (select 1 from ${oidcRefreshTokens} r join ${oidcPayloads} p on p.type = 'RefreshToken' and p.id = r.id
                  where r.id = ${ph("spent")} and r.successor_id = ${ph("replaced")} and r.consumed_at >= ${ph("since")}::timestamptz)`,
              ),
            )
            .returning({ id: oidcPayloads.id }),
        ),
      db
        .$with("renamed")
        .as(
          db
            .update(oidcRefreshTokens)
            .set({ successorId: sql`${ph("r_id")}::varchar` })
            .where(and(eq(oidcRefreshTokens.id, ph("spent")), eq(oidcRefreshTokens.successorId, ph("replaced")), retiredHere))
            .returning({ id: oidcRefreshTokens.id }),
        ),
      db.$with("retired_record").as(db.update(oidcRefreshTokens).set({ consumedAt: spentAt }).where(and(eq(oidcRefreshTokens.id, ph("replaced")), renamedHere))),
      db
        .$with("retired_access_token")
        .as(
          db
            .delete(oidcPayloads)
            .where(
              and(
                eq(oidcPayloads.type, "AccessToken"),
                sql`${oidcPayloads.id} = (select r.access_token_id from ${oidcRefreshTokens} r where r.id = ${ph("replaced")})`,
                renamedHere,
              ),
            ),
        ),
      db.$with("successor").as(db.insert(oidcPayloads).select(payloadIf("r", renamedHere)).onConflictDoUpdate({ target, set: replaced })),
      db.$with("access_token").as(db.insert(oidcPayloads).select(payloadIf("a", renamedHere)).onConflictDoUpdate({ target, set: replaced })),
      auditInsertWhenAs(db, "audit", renamedHere),
    )
    .insert(oidcRefreshTokens)
    .select(sql`${recordIfSpent} where ${renamedHere}`)
    .onConflictDoNothing()
    .returning({ id: oidcRefreshTokens.id })
    .prepare("oidc_refresh_rotate_again");

  // What a retry checks again when its write found things changed: the token spent at or after
  // `since`, still stored, and the successor it names unspent.
  const unusedSuccessor = db
    .select({ key: oidcRefreshTokens.successorId })
    .from(oidcRefreshTokens)
    .innerJoin(oidcPayloads, and(eq(oidcPayloads.type, "RefreshToken"), eq(oidcPayloads.id, oidcRefreshTokens.successorId), isNull(oidcPayloads.consumedAt)))
    .where(
      and(
        eq(oidcRefreshTokens.id, ph("spent")),
        gte(oidcRefreshTokens.consumedAt, sql`${ph("since")}::timestamptz`),
        sql`exists (select 1 from ${oidcPayloads} p where p.type = 'RefreshToken' and p.id = ${oidcRefreshTokens.id})`,
      ),
    )
    .prepare("oidc_refresh_unused_successor");
  const rotationValues = (v: RotationValues) => ({
    spent: v.spent.key,
    spent_at: v.spent.at.toISOString(),
    ...payloadValues("r", v.successor),
    ...payloadValues("a", v.accessToken),
    record_grant_id: v.record.grantId,
    record_client_id: v.record.clientId,
    record_account_id: v.record.accountId,
    record_expires_at: v.record.expiresAt?.toISOString() ?? null,
    record_created_at: v.record.createdAt.toISOString(),
    audit_rows: auditRowsJson(v.audit),
  });
  return {
    find: (v: { type: string; id: string; now: Date }) => find.execute({ type: v.type, id: v.id, now: v.now.toISOString() }),
    save: (r: PayloadRow) => save.execute(payloadValues("s", r)),
    /** Rows of distinct keys, with the audit records of the requests that issued them (if any), one statement. */
    saveMany: (rows: PayloadRow[], audit: AuditRow[] = []) => {
      const values = { rows: JSON.stringify(rows.map((r) => ({ id: r.id, type: r.type, payload: r.payload, grant_id: r.grantId, user_code: r.userCode, uid: r.uid, expires_at: r.expiresAt?.toISOString() ?? null }))) };
      return audit.length > 0 ? saveManyAudited.execute({ ...values, audit_rows: auditRowsJson(audit) }) : saveMany.execute(values);
    },
    /** True when the rotation was written; false when the old token had already been spent (nothing written). */
    rotate: async (v: RotationValues): Promise<boolean> => (await rotate.execute(rotationValues(v))).length > 0,
    /** True when the retry was written; false when the successor it replaces was used or retired first (nothing written). */
    rotateAgain: async (v: RetryValues): Promise<boolean> =>
      (await rotateAgain.execute({ ...rotationValues(v), replaced: v.replaced, since: v.since.toISOString() })).length > 0,
    /** The successor of the token `spent` when it was spent at or after `since`, is still stored, and the successor is unspent. */
    unusedSuccessor: async (spent: string, since: Date): Promise<string | undefined> => {
      const [row] = await unusedSuccessor.execute({ spent, since: since.toISOString() });
      return row?.key ?? undefined;
    },
    /**
     * A rotation in another shape (no successor, or an access token that is not stored): the old
     * token spent and `rest` written in one transaction, if nobody spent it first. True when written.
     */
    spendOnce: (spent: { key: string; at: Date; successor?: string }, rest: SQL[]): Promise<boolean> =>
      db.transaction(async (tx) => {
        const [row] = await tx
          .update(oidcPayloads)
          .set({ consumedAt: spent.at })
          .where(and(eq(oidcPayloads.type, "RefreshToken"), eq(oidcPayloads.id, spent.key), isNull(oidcPayloads.consumedAt)))
          .returning({ id: oidcPayloads.id });
        if (!row) return false;
        await tx.update(oidcRefreshTokens).set({ consumedAt: spent.at, successorId: spent.successor ?? null }).where(eq(oidcRefreshTokens.id, spent.key));
        for (const part of rest) await tx.execute(part);
        return true;
      }),
    /**
     * A grant revoked whole, as the provider revokes one whose refresh token or code was used twice
     * (helpers/revoke.js under its default revokeGrantPolicy, which at the token endpoint removes the
     * grant too): every token and code of the grant, the grant itself (row key `grantKey`), and its
     * refresh records spent. Tokens another request saves after this are dead all the same: every use
     * of a token looks its grant up.
     */
    revokeGrant: async (grantId: string, grantKey: string, at: Date): Promise<void> => {
      const dropped = db.delete(oidcPayloads).where(or(eq(oidcPayloads.grantId, grantId), and(eq(oidcPayloads.type, "Grant"), eq(oidcPayloads.id, grantKey))));
      const spent = db.update(oidcRefreshTokens).set({ consumedAt: at }).where(and(eq(oidcRefreshTokens.grantId, grantId), isNull(oidcRefreshTokens.consumedAt)));
      await db.execute(sql`with dropped as (${dropped.getSQL()}) ${spent.getSQL()}`);
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
    recordSql: (r: RefreshRecord, accessTokenId: string | null): SQL => db.insert(oidcRefreshTokens).values({ ...r, accessTokenId }).onConflictDoNothing().getSQL(),
    /** The refresh token's payload and record marked consumed. */
    spentSql: (key: string, at: Date): SQL[] => [
      db.update(oidcPayloads).set({ consumedAt: at }).where(and(eq(oidcPayloads.type, "RefreshToken"), eq(oidcPayloads.id, key))).getSQL(),
      db.update(oidcRefreshTokens).set({ consumedAt: at }).where(eq(oidcRefreshTokens.id, key)).getSQL(),
    ],
    /** The refresh token saved earlier in the request names its access token. */
    nameAccessTokenSql: (refreshTokenKey: string, accessTokenKey: string): SQL =>
      db.update(oidcRefreshTokens).set({ accessTokenId: accessTokenKey }).where(eq(oidcRefreshTokens.id, refreshTokenKey)).getSQL(),
    /** Writes as one statement: each part a data-modifying CTE, `last` the main statement. */
    run: async (parts: SQL[], last: SQL): Promise<void> => {
      await db.execute(parts.length === 0 ? last : sql`with ${sql.join(parts.map((p, i) => sql`${sql.raw(`w${i}`)} as (${p})`), sql`, `)} ${last}`);
    },
  };
}
