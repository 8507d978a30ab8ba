import { and, eq, gt, inArray, isNotNull, isNull, or, sql } from "drizzle-orm";
import { alias, type AnyPgColumn } from "drizzle-orm/pg-core";
import { oidcClients, oidcPayloads, oidcRefreshTokens } from "../../../schema/index.js";
import type { Db, Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";

// Tokens, codes and grants carry clientId and accountId inside their payload.
const payloadClientId = () => sql<string>`${oidcPayloads.payload}->>'clientId'`;
const payloadAccountId = () => sql<string>`${oidcPayloads.payload}->>'accountId'`;
const notExpired = (expiresAt: AnyPgColumn, now: unknown) => or(isNull(expiresAt), gt(expiresAt, now));

/** What a grant issues: each names its grant, and lives no longer than it. */
const GRANTED_TYPES = ["AccessToken", "AuthorizationCode", "RefreshToken", "DeviceCode", "BackchannelAuthenticationRequest"];
/** No Grant row has this grant id (grant rows are stored under the SHA-256 of their id, as every row). */
const grantGone = (grantId: AnyPgColumn) =>
  sql`not exists (select 1 from ${oidcPayloads} as g where g.type = 'Grant' and g.id = encode(sha256(convert_to(${grantId}, 'UTF8')), 'hex'))`;

/** An access token row as the delegated-token check reads it, with what its client may do now. */
export interface DelegatedTokenRow {
  payload: Record<string, unknown>;
  allowed: string[];
}

/**
 * oidc-provider's storage (tokens, codes, grants, sessions) as Keyward's services act on it: ending
 * what belongs to a client or a person, and purging what expired. The provider itself reads and
 * writes it through src/oidc/adapter.ts.
 */
export const oidcPayloadsRepository = {
  /** Every token, code and grant issued to a client. */
  async deleteForClient(db: Executor, clientId: string): Promise<void> {
    await db.delete(oidcPayloads).where(eq(payloadClientId(), clientId));
  },

  /** What a client holds for one person. */
  async deleteForClientAndAccount(db: Executor, clientId: string, accountId: string): Promise<void> {
    await db.delete(oidcPayloads).where(and(eq(payloadClientId(), clientId), eq(payloadAccountId(), accountId)));
  },

  /** Every provider row of one account, and its refresh-token records. Returns how many provider rows went. */
  async deleteForAccount(db: Executor, accountId: string): Promise<number> {
    const rows = await db.delete(oidcPayloads).where(eq(payloadAccountId(), accountId)).returning({ id: oidcPayloads.id });
    await db.delete(oidcRefreshTokens).where(eq(oidcRefreshTokens.accountId, accountId));
    return rows.length;
  },

  /**
   * Deletes provider rows and refresh-token records past their expiry, and what a grant issued
   * once the grant is gone; returns how many provider rows went.
   */
  async deleteExpired(db: Executor, now: Date): Promise<number> {
    const at = now.toISOString();
    const rows = await db
      .delete(oidcPayloads)
      .where(sql`${oidcPayloads.expiresAt} is not null and ${oidcPayloads.expiresAt} < ${at}::timestamptz`)
      .returning({ id: oidcPayloads.id });
    await db.delete(oidcRefreshTokens).where(sql`${oidcRefreshTokens.expiresAt} is not null and ${oidcRefreshTokens.expiresAt} < ${at}::timestamptz`);
    // Tokens and codes whose grant is gone: a replayed code or refresh token revokes the grant
    // while the winner of the race may still be saving what it issued. Unusable (every use looks
    // its grant up), but kept until their own expiry they would still count as issued.
    const orphans = await db
      .delete(oidcPayloads)
      .where(and(isNotNull(oidcPayloads.grantId), inArray(oidcPayloads.type, GRANTED_TYPES), grantGone(oidcPayloads.grantId)))
      .returning({ id: oidcPayloads.id });
    await db.update(oidcRefreshTokens).set({ consumedAt: now }).where(and(isNull(oidcRefreshTokens.consumedAt), grantGone(oidcRefreshTokens.grantId)));
    return rows.length + orphans.length;
  },

  /**
   * The access token with this (hashed) id, when it and its grant are unexpired, its client still
   * exists, and, for a token bound to a browser session, that session still does. Checked on every
   * API request that carries one: prepared once.
   */
  prepareLiveAccessToken(db: Db): { execute(v: { id: string; now: string }): Promise<DelegatedTokenRow[]> } {
    const grant = alias(oidcPayloads, "grant");
    const session = alias(oidcPayloads, "browser_session");
    const token = oidcPayloads;
    const now = sql.placeholder("now");
    return db
      .select({ payload: token.payload, allowed: oidcClients.allowedApiScopes })
      .from(token)
      .innerJoin(grant, and(eq(grant.type, "Grant"), eq(grant.id, sql`encode(sha256(convert_to(${token.grantId}, 'UTF8')), 'hex')`), notExpired(grant.expiresAt, now)))
      .innerJoin(oidcClients, and(eq(oidcClients.clientId, sql`${token.payload}->>'clientId'`), live(oidcClients)))
      .where(
        and(
          eq(token.type, "AccessToken"),
          eq(token.id, sql.placeholder("id")),
          notExpired(token.expiresAt, now),
          sql`(coalesce((${token.payload}->>'expiresWithSession')::boolean, false) = false or exists (
            select 1 from ${oidcPayloads} as "browser_session" where ${session.type} = 'Session' and ${session.uid} = ${token.payload}->>'sessionUid'
              and ${session.payload}->>'accountId' = ${token.payload}->>'accountId'
              and (${session.expiresAt} is null or ${session.expiresAt} > ${now})))`,
        ),
      )
      .prepare("oidc_delegated_token_find");
  },
};
