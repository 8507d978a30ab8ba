import { eq, isNull, lt, sql } from "drizzle-orm";
import { oidcSigningKeys } from "../../../schema/index.js";
import type { Executor, Tx } from "../../infra/db.js";

// Arbitrary constant: serialises key generation and rotation across instances.
const KEYS_LOCK_ID = 7420003;

export type ActiveSigningKey = { kid: string; alg: string; createdAt: Date };

/** The provider's signing keys. The sealed private JWKs are read by signing-keys.secrets.repository.ts only. */
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

  /** Drops keys past their grace period; returns how many. */
  async deleteExpired(db: Executor, now: Date): Promise<number> {
    const rows = await db.delete(oidcSigningKeys).where(lt(oidcSigningKeys.expiresAt, now)).returning({ kid: oidcSigningKeys.kid });
    return rows.length;
  },
};
