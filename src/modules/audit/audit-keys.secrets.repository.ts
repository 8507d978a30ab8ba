import { desc, eq } from "drizzle-orm";
import { auditSigningKeys } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";

/**
 * Privileged (ARCHITECTURE rule 7): the chain-anchor signing keys with their sealed private keys.
 * Only the audit signer (chain-signer.service.ts) imports it (eslint.config.js enforces it).
 */
export const auditKeysSecretsRepository = {
  newestPrivileged: async (db: Executor) =>
    (await db.select({ kid: auditSigningKeys.kid, publicKey: auditSigningKeys.publicKey, sealed: auditSigningKeys.privateKeySealed }).from(auditSigningKeys).orderBy(desc(auditSigningKeys.createdAt)).limit(1))[0],

  findPrivileged: async (db: Executor, kid: string) =>
    (await db.select({ kid: auditSigningKeys.kid, publicKey: auditSigningKeys.publicKey, sealed: auditSigningKeys.privateKeySealed }).from(auditSigningKeys).where(eq(auditSigningKeys.kid, kid)))[0],
};
