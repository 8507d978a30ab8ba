import { desc, eq, gt, isNull, lt, or, sql } from "drizzle-orm";
import { oidcSigningKeys } from "../../../schema/index.js";
import type { Executor, Tx } from "../../infra/db.js";

// Arbitrary constant: serialises key generation and rotation across instances.
const KEYS_LOCK_ID = 7420003;

export type ActiveSigningKey = { kid: string; alg: string; createdAt: Date };

/** The provider's signing keys. The sealed private JWKs are read by `listPublishedPrivileged` only. */
export const signingKeysRepository = {
  /** Held until the transaction ends: one instance at a time creates or rotates keys. */
  async lockRotation(tx: Tx): Promise<void> {
    await tx.execute(sql`select pg_advisory_xact_lock(${KEYS_LOCK_ID})`);
  },

  /** Keys that still sign (not retired). */
  listActive: (db: Executor): Promise<ActiveSigningKey[]> =>
    db.select({ kid: oidcSigningKeys.kid, alg: oidcSigningKeys.alg, createdAt: oidcSigningKeys.createdAt }).from(oidcSigningKeys).where(isNull(oidcSigningKeys.retiredAt)),

  async insert(db: Executor, v: { kid: string; alg: string; sealed: string; now: Date }): Promise<void> {
    await db.insert(oidcSigningKeys).values({ kid: v.kid, alg: v.alg, privateJwkSealed: v.sealed, createdAt: v.now });
  },

  /** The key stops signing now and stays published until `expiresAt`. */
  async retire(db: Executor, kid: string, now: Date, expiresAt: Date): Promise<void> {
    await db.update(oidcSigningKeys).set({ retiredAt: now, expiresAt }).where(eq(oidcSigningKeys.kid, kid));
  },

  /**
   * Privileged (ARCHITECTURE rule 7): the sealed private JWKs of the published set (active keys
   * first, newest first, then retired keys inside their grace period). Only OidcSigningKeysService
   * imports this; it hands the unsealed keys to oidc-provider and nowhere else.
   */
  listPublishedPrivileged: (db: Executor, now: Date): Promise<Array<{ kid: string; sealed: string; retiredAt: Date | null }>> =>
    db
      .select({ kid: oidcSigningKeys.kid, sealed: oidcSigningKeys.privateJwkSealed, retiredAt: oidcSigningKeys.retiredAt })
      .from(oidcSigningKeys)
      .where(or(isNull(oidcSigningKeys.retiredAt), gt(oidcSigningKeys.expiresAt, now)))
      .orderBy(sql`${oidcSigningKeys.retiredAt} is not null`, desc(oidcSigningKeys.createdAt)),

  /** Drops keys past their grace period; returns how many. */
  async deleteExpired(db: Executor, now: Date): Promise<number> {
    const rows = await db.delete(oidcSigningKeys).where(lt(oidcSigningKeys.expiresAt, now)).returning({ kid: oidcSigningKeys.kid });
    return rows.length;
  },
};
