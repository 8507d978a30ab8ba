import { and, eq } from "drizzle-orm";
import { passwordCredentials } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { noteProfileChanged } from "../users/index.js";

/** Password credentials, written and checked for presence; the hash is read by credentials.secrets.repository.ts only. */
export const credentialsRepository = {
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
