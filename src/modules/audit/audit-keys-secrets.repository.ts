import { desc, eq } from "drizzle-orm";
import { auditSigningKeys } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";

/**
 * The chain-anchor signing keys. Privileged (rule 7): it reads sealed private keys, so only the
 * audit signer imports it (eslint: *-secrets repositories stay in their folder).
 */
export const auditKeysRepository = {
  async insert(db: Executor, v: { kid: string; publicKey: string; sealed: string; now: Date }): Promise<void> {
    await db.insert(auditSigningKeys).values({ kid: v.kid, publicKey: v.publicKey, privateKeySealed: v.sealed, createdAt: v.now }).onConflictDoNothing();
  },

  newestPrivileged: async (db: Executor) =>
    (await db.select({ kid: auditSigningKeys.kid, publicKey: auditSigningKeys.publicKey, sealed: auditSigningKeys.privateKeySealed }).from(auditSigningKeys).orderBy(desc(auditSigningKeys.createdAt)).limit(1))[0],

  findPrivileged: async (db: Executor, kid: string) =>
    (await db.select({ kid: auditSigningKeys.kid, publicKey: auditSigningKeys.publicKey, sealed: auditSigningKeys.privateKeySealed }).from(auditSigningKeys).where(eq(auditSigningKeys.kid, kid)))[0],
};
