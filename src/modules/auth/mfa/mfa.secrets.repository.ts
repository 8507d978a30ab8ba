import { and, eq } from "drizzle-orm";
import { totpFactors, webauthnCredentials } from "../../../../schema/index.js";
import { pickColumns } from "../../../infra/columns.js";
import type { Executor } from "../../../infra/db.js";
import { live } from "../../../infra/soft-delete.js";

/**
 * Privileged (ARCHITECTURE rule 7): the reads that return MFA secrets, WebAuthn public keys and
 * counters and the sealed TOTP seed. Imported by mfa.service.ts and mfa-login.service.ts only
 * (eslint.config.js enforces it); the writes, which return none, are in mfa.repository.ts.
 */
export const mfaSecretsRepository = {
  credentialsForAuth: (db: Executor, userId: string) =>
    db
      .select({ id: webauthnCredentials.id, credentialId: webauthnCredentials.credentialId, publicKey: webauthnCredentials.publicKey, counter: webauthnCredentials.counter, transports: webauthnCredentials.transports })
      .from(webauthnCredentials)
      .where(and(eq(webauthnCredentials.userId, userId), live(webauthnCredentials))),

  async credentialById(db: Executor, credentialId: string) {
    const [row] = await db
      .select(pickColumns(webauthnCredentials, ["id", "userId", "credentialId", "publicKey", "counter", "transports"]))
      .from(webauthnCredentials)
      .where(and(eq(webauthnCredentials.credentialId, credentialId), live(webauthnCredentials)));
    return row;
  },

  async totp(db: Executor, userId: string) {
    const [row] = await db
      .select({ secretSealed: totpFactors.secretSealed, verifiedAt: totpFactors.verifiedAt, lastUsedStep: totpFactors.lastUsedStep })
      .from(totpFactors)
      .where(eq(totpFactors.userId, userId));
    return row;
  },
};
