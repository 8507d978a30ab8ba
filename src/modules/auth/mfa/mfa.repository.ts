import { and, desc, eq, inArray, isNull, sql } from "drizzle-orm";
import { backupCodes, totpFactors, users, webauthnCredentials } from "../../../../schema/index.js";
import { pickColumns } from "../../../infra/columns.js";
import type { Executor } from "../../../infra/db.js";
import { live } from "../../../infra/soft-delete.js";
import { preparedQuery } from "../../../infra/prepared.js";

export const credentialViewColumns = pickColumns(webauthnCredentials, ["id", "userId", "name", "transports", "deviceType", "backedUp", "aaguid", "createdAt", "lastUsedAt"]);
/** A WebAuthn credential without its public key or counter. */
export type CredentialView = Pick<typeof webauthnCredentials.$inferSelect, keyof typeof credentialViewColumns>;

/** What a user has enrolled, as counts read off a row of "users" in the same query (the sign-in reads them with the account). */
export const mfaMethodCounts = {
  // Spelled out: drizzle leaves columns in a select list unqualified, and "user_id" = "id" would bind to the subquery's table.
  webauthn: sql<number>`(select count(*) from "webauthn_credentials" w where w."user_id" = "users"."id" and w."deleted_at" is null)::int`,
  totp: sql<number>`(select count(*) from "totp_factors" t where t."user_id" = "users"."id" and t."verified_at" is not null)::int`,
  backupCodes: sql<number>`(select count(*) from "backup_codes" b where b."user_id" = "users"."id" and b."used_at" is null)::int`,
};

export interface MfaMethods {
  webauthn: number;
  totp: boolean;
  backupCodes: number;
}

export const toMfaMethods = (row: { webauthn: number; totp: number; backupCodes: number } | undefined): MfaMethods => ({
  webauthn: row?.webauthn ?? 0,
  totp: (row?.totp ?? 0) > 0,
  backupCodes: row?.backupCodes ?? 0,
});

// Asked at every second-factor step: the three counts in one statement, prepared once.
const countMethods = preparedQuery("mfa_method_counts", (db) => db.select(mfaMethodCounts).from(users).where(eq(users.id, sql.placeholder("userId"))));

/** What a user has enrolled, without any secret (the reads of secrets are in mfa.secrets.repository.ts). */
export const mfaRepository = {
  listCredentials: (db: Executor, userId: string): Promise<CredentialView[]> =>
    db.select(credentialViewColumns).from(webauthnCredentials).where(and(eq(webauthnCredentials.userId, userId), live(webauthnCredentials))).orderBy(desc(webauthnCredentials.createdAt)),

  async methods(db: Executor, userId: string): Promise<MfaMethods> {
    const [row] = await countMethods(db, { userId });
    return toMfaMethods(row);
  },

  async renameCredential(db: Executor, userId: string, id: string, name: string): Promise<CredentialView | undefined> {
    const [row] = await db
      .update(webauthnCredentials)
      .set({ name })
      .where(and(eq(webauthnCredentials.id, id), eq(webauthnCredentials.userId, userId), live(webauthnCredentials)))
      .returning(credentialViewColumns);
    return row;
  },

  async deleteCredential(db: Executor, userId: string, id: string, now: Date): Promise<CredentialView | undefined> {
    const [row] = await db
      .update(webauthnCredentials)
      .set({ deletedAt: now })
      .where(and(eq(webauthnCredentials.id, id), eq(webauthnCredentials.userId, userId), live(webauthnCredentials)))
      .returning(credentialViewColumns);
    return row;
  },

  async deleteAllCredentials(db: Executor, userId: string, now: Date): Promise<number> {
    const rows = await db.update(webauthnCredentials).set({ deletedAt: now }).where(and(eq(webauthnCredentials.userId, userId), live(webauthnCredentials))).returning({ id: webauthnCredentials.id });
    return rows.length;
  },

  async deleteTotp(db: Executor, userId: string): Promise<boolean> {
    const rows = await db.delete(totpFactors).where(eq(totpFactors.userId, userId)).returning({ userId: totpFactors.userId });
    return rows.length > 0;
  },

  async replaceBackupCodes(db: Executor, userId: string, hashes: string[], now: Date) {
    await db.delete(backupCodes).where(eq(backupCodes.userId, userId));
    if (hashes.length) await db.insert(backupCodes).values(hashes.map((codeHash) => ({ userId, codeHash, createdAt: now })));
  },

  /** Spends a backup code. The conditional update is the single-use guard under concurrency. */
  async consumeBackupCode(db: Executor, userId: string, candidates: string[], now: Date): Promise<boolean> {
    const rows = await db
      .update(backupCodes)
      .set({ usedAt: now })
      .where(and(eq(backupCodes.userId, userId), inArray(backupCodes.codeHash, candidates), isNull(backupCodes.usedAt)))
      .returning({ id: backupCodes.id });
    return rows.length === 1;
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
