import { and, eq, gte, isNull, or, sql, type SQL } from "drizzle-orm";
import { oidcPayloads, oidcRefreshTokens } from "../../schema/index.js";
import type { Db } from "../infra/db.js";
import { auditInsertWhenAs, auditRowsJson, type AuditRow } from "../modules/audit/index.js";
import { payloadValues, ph, replaced, target, type PayloadRow, type RefreshRecord } from "./adapter-statements.js";

// A refresh token's statements: its rotation and a rotation's retry (each prepared once, each one
// statement), the other shapes a rotation takes, and a grant revoked whole when one of its tokens or
// codes is used twice. The statements for every model are in adapter-statements.ts.

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

/**
 * The refresh-token statements. A rotation and its retry are built and prepared once (every refresh
 * runs one of them); the rarer shapes are SQL for adapterStatements' `run` or a transaction.
 */
export function refreshStatements(db: Db) {
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
    /** A refresh token's record, naming the access token issued with it (if stored yet). */
    recordSql: (r: RefreshRecord, accessTokenId: string | null): SQL => db.insert(oidcRefreshTokens).values({ ...r, accessTokenId }).onConflictDoNothing().getSQL(),
    /** The refresh token's payload and record marked consumed. */
    spentSql: (key: string, at: Date): SQL[] => [
      db.update(oidcPayloads).set({ consumedAt: at }).where(and(eq(oidcPayloads.type, "RefreshToken"), eq(oidcPayloads.id, key))).getSQL(),
      db.update(oidcRefreshTokens).set({ consumedAt: at }).where(eq(oidcRefreshTokens.id, key)).getSQL(),
    ],
    /** The refresh token saved earlier in the request names its access token. */
    nameAccessTokenSql: (refreshTokenKey: string, accessTokenKey: string): SQL =>
      db.update(oidcRefreshTokens).set({ accessTokenId: accessTokenKey }).where(eq(oidcRefreshTokens.id, refreshTokenKey)).getSQL(),
  };
}
