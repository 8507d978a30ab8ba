import { and, eq, sql } from "drizzle-orm";
import { passwordCredentials, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { preparedQuery } from "../../infra/prepared.js";
import { noteProfileChanged } from "../users/index.js";
import { live } from "../../infra/soft-delete.js";
import { userColumns, type UserRow } from "../users/users.repository.js";
import { mfaMethodCounts, toMfaMethods, type MfaMethods } from "./mfa/mfa.repository.js";

/**
 * Privileged: the only reader of password hashes. Imported by the credentials service alone
 * (ARCHITECTURE rule 7; eslint.config.js enforces it).
 */
const findHash = preparedQuery("password_hash_of_user", (db) =>
  db.select({ hash: passwordCredentials.passwordHash }).from(passwordCredentials).where(eq(passwordCredentials.userId, sql.placeholder("userId"))),
);

// A password sign-in's one read: the live account with this address, its password hash (null
// without a password) and its MFA method counts (usersRepository.findByEmail, findHash and
// mfaRepository.methods together).
const findSignIn = preparedQuery("sign_in_by_email", (db) =>
  db
    .select({ ...userColumns, hash: passwordCredentials.passwordHash, ...mfaMethodCounts })
    .from(users)
    .leftJoin(passwordCredentials, eq(passwordCredentials.userId, users.id))
    .where(and(eq(users.email, sql.placeholder("email")), live(users))),
);

export const credentialsRepository = {
  async findSignIn(db: Executor, email: string): Promise<{ user: UserRow; hash: string | undefined; mfa: MfaMethods } | undefined> {
    const [row] = await findSignIn(db, { email });
    if (!row) return undefined;
    const { hash, webauthn, totp, backupCodes, ...user } = row;
    return { user, hash: hash ?? undefined, mfa: toMfaMethods({ webauthn, totp, backupCodes }) };
  },

  async findPasswordHash(db: Executor, userId: string): Promise<string | undefined> {
    const [row] = await findHash(db, { userId });
    return row?.hash;
  },

  async hasPassword(db: Executor, userId: string): Promise<boolean> {
    const rows = await db.select({ userId: passwordCredentials.userId }).from(passwordCredentials).where(eq(passwordCredentials.userId, userId));
    return rows.length > 0;
  },

  /** Replaces the hash only if it is still `previous` (an upgrade on sign-in must not undo a change made meanwhile); true when replaced. */
  async replacePasswordHash(db: Executor, userId: string, previous: string, hash: string, now: Date): Promise<boolean> {
    const rows = await db
      .update(passwordCredentials)
      .set({ passwordHash: hash, updatedAt: now })
      .where(and(eq(passwordCredentials.userId, userId), eq(passwordCredentials.passwordHash, previous)))
      .returning({ userId: passwordCredentials.userId });
    return rows.length > 0;
  },

  async setPasswordHash(db: Executor, userId: string, hash: string, now: Date): Promise<void> {
    // A first password shows in the profile (has_password).
    noteProfileChanged(userId);
    await db
      .insert(passwordCredentials)
      .values({ userId, passwordHash: hash, updatedAt: now })
      .onConflictDoUpdate({ target: passwordCredentials.userId, set: { passwordHash: hash, updatedAt: now } });
  },
};
