import { eq, sql } from "drizzle-orm";
import { passwordCredentials } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { preparedQuery } from "../../infra/prepared.js";
import { noteProfileChanged } from "../users/user-cache.js";

/**
 * Privileged: the only reader of password hashes. Imported by the credentials service alone
 * (ARCHITECTURE rule 7; eslint.config.js enforces it).
 */
const findHash = preparedQuery("password_hash_of_user", (db) =>
  db.select({ hash: passwordCredentials.passwordHash }).from(passwordCredentials).where(eq(passwordCredentials.userId, sql.placeholder("userId"))),
);

export const credentialsRepository = {
  async findPasswordHash(db: Executor, userId: string): Promise<string | undefined> {
    const [row] = await findHash(db, { userId });
    return row?.hash;
  },

  async hasPassword(db: Executor, userId: string): Promise<boolean> {
    const rows = await db.select({ userId: passwordCredentials.userId }).from(passwordCredentials).where(eq(passwordCredentials.userId, userId));
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
