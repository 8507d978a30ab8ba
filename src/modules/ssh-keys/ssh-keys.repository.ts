import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { preparedQuery } from "../../infra/prepared.js";
import { sshKeys } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";

export const sshKeyColumns = pickColumns(sshKeys, ["id", "userId", "publicKey", "fingerprint", "keyType", "keyBits", "keyComment", "description", "verifiedAt", "verifyText", "verifyTextCreatedAt", "skProofFlags", "createdAt", "updatedAt"]);
export type SshKeyRow = Pick<typeof sshKeys.$inferSelect, keyof typeof sshKeyColumns>;

// Every signature looks its key up: prepared once.
const findOwned = preparedQuery("ssh_key_find_owned", (db) =>
  db.select(sshKeyColumns).from(sshKeys).where(and(eq(sshKeys.id, sql.placeholder("id")), eq(sshKeys.userId, sql.placeholder("userId")), live(sshKeys))),
);

export const sshKeysRepository = {
  /** A key of this user (another user's key is "not found"). */
  async findOwned(db: Executor, userId: string, id: string): Promise<SshKeyRow | undefined> {
    const [row] = await findOwned(db, { id, userId });
    return row;
  },

  async findByFingerprint(db: Executor, userId: string, fingerprint: string): Promise<SshKeyRow | undefined> {
    const [row] = await db.select(sshKeyColumns).from(sshKeys).where(and(eq(sshKeys.userId, userId), eq(sshKeys.fingerprint, fingerprint), live(sshKeys)));
    return row;
  },

  listForUser: (db: Executor, userId: string): Promise<SshKeyRow[]> =>
    db.select(sshKeyColumns).from(sshKeys).where(and(eq(sshKeys.userId, userId), live(sshKeys))).orderBy(desc(sshKeys.createdAt)),

  /**
   * Registers a key unless this user already has it live (the partial unique index decides, also
   * between two concurrent adds): undefined when it was already there.
   */
  async insertIfAbsent(db: Executor, v: Omit<typeof sshKeys.$inferInsert, "id">): Promise<SshKeyRow | undefined> {
    const [row] = await db
      .insert(sshKeys)
      .values(v)
      .onConflictDoNothing({ target: [sshKeys.userId, sshKeys.fingerprint], where: isNull(sshKeys.deletedAt) })
      .returning(sshKeyColumns);
    return row;
  },

  async update(db: Executor, userId: string, id: string, values: Partial<typeof sshKeys.$inferInsert>): Promise<SshKeyRow | undefined> {
    const [row] = await db.update(sshKeys).set(values).where(and(eq(sshKeys.id, id), eq(sshKeys.userId, userId), live(sshKeys))).returning(sshKeyColumns);
    return row;
  },

  /**
   * Marks the key verified only while `challenge` is still its open challenge (a challenge is spent
   * once), with a security key's flags in that proof (null for other keys).
   */
  async spendChallenge(db: Executor, userId: string, id: string, challenge: string, skProofFlags: number | null, now: Date): Promise<SshKeyRow | undefined> {
    const [row] = await db
      .update(sshKeys)
      .set({ verifiedAt: now, verifyText: null, verifyTextCreatedAt: null, skProofFlags, updatedAt: now })
      .where(and(eq(sshKeys.id, id), eq(sshKeys.userId, userId), live(sshKeys), eq(sshKeys.verifyText, challenge)))
      .returning(sshKeyColumns);
    return row;
  },
};
