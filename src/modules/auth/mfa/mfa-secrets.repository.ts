import { and, eq, sql } from "drizzle-orm";
import { totpFactors, webauthnCredentials } from "../../../../schema/index.js";
import { pickColumns } from "../../../infra/columns.js";
import type { Executor } from "../../../infra/db.js";
import { live } from "../../../infra/soft-delete.js";
import { credentialViewColumns } from "./mfa.repository.js";

/**
 * Privileged reads and writes of MFA secrets: WebAuthn public keys and counters, the sealed TOTP
 * seed. Imported by the MFA services only (eslint.config.js enforces it).
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

  async insertCredential(db: Executor, v: typeof webauthnCredentials.$inferInsert) {
    const [row] = await db.insert(webauthnCredentials).values(v).returning(credentialViewColumns);
    return row!;
  },

  /** Moves the counter forward only: a concurrent replay with the same counter loses. */
  async advanceCounter(db: Executor, id: string, counter: number, now: Date): Promise<boolean> {
    const rows = await db
      .update(webauthnCredentials)
      .set({ counter, lastUsedAt: now })
      .where(and(eq(webauthnCredentials.id, id), sql`(${webauthnCredentials.counter} < ${counter} or (${webauthnCredentials.counter} = 0 and ${counter} = 0))`))
      .returning({ id: webauthnCredentials.id });
    return rows.length === 1;
  },

  async totp(db: Executor, userId: string) {
    const [row] = await db
      .select({ secretSealed: totpFactors.secretSealed, verifiedAt: totpFactors.verifiedAt, lastUsedStep: totpFactors.lastUsedStep })
      .from(totpFactors)
      .where(eq(totpFactors.userId, userId));
    return row;
  },

  async upsertPendingTotp(db: Executor, userId: string, secretSealed: string, now: Date) {
    await db
      .insert(totpFactors)
      .values({ userId, secretSealed, createdAt: now })
      .onConflictDoUpdate({ target: totpFactors.userId, set: { secretSealed, verifiedAt: null, lastUsedStep: 0, createdAt: now } });
  },

  /** Records the step a code used; refuses a step at or before the last (so a code works once). */
  async useTotpStep(db: Executor, userId: string, step: number, verify: Date | null): Promise<boolean> {
    const rows = await db
      .update(totpFactors)
      .set({ lastUsedStep: step, ...(verify ? { verifiedAt: verify } : {}) })
      .where(and(eq(totpFactors.userId, userId), sql`${totpFactors.lastUsedStep} < ${step}`))
      .returning({ userId: totpFactors.userId });
    return rows.length === 1;
  },
};
