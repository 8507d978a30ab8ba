import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../infra/db.js";
import { passwordCredentials, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";

/** The user columns any service may read: never a credential. */
export const userColumns = {
  id: users.id,
  email: users.email,
  fullName: users.fullName,
  avatarUrl: users.avatarUrl,
  emailVerifiedAt: users.emailVerifiedAt,
  status: users.status,
  isSuperadmin: users.isSuperadmin,
  suspendedAt: users.suspendedAt,
  lastLoginAt: users.lastLoginAt,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
};

export type UserStatus = (typeof users.status.enumValues)[number];

export type UserRow = {
  id: string;
  email: string;
  fullName: string | null;
  avatarUrl: string | null;
  emailVerifiedAt: Date | null;
  status: UserStatus;
  isSuperadmin: boolean;
  suspendedAt: Date | null;
  lastLoginAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
};

export const usersRepository = {
  async findById(db: Executor, id: string): Promise<UserRow | undefined> {
    const [row] = await db.select(userColumns).from(users).where(and(eq(users.id, id), live(users)));
    return row;
  },

  /**
   * The per-request lookup behind every authenticated call, as a prepared statement: no query
   * building on the hot path, and the server reuses its plan.
   */
  prepareFindById(db: Db): (id: string) => Promise<UserRow | undefined> {
    const query = db
      .select(userColumns)
      .from(users)
      .where(and(eq(users.id, sql.placeholder("id")), live(users)))
      .prepare("users_find_by_id");
    return async (id) => (await query.execute({ id }))[0];
  },

  /** The user and whether a password is set, in one round trip. */
  async findByIdWithPasswordFlag(db: Executor, id: string): Promise<(UserRow & { hasPassword: boolean }) | undefined> {
    const [row] = await db
      .select({ ...userColumns, hasPassword: sql<boolean>`${passwordCredentials.userId} is not null` })
      .from(users)
      .leftJoin(passwordCredentials, eq(passwordCredentials.userId, users.id))
      .where(and(eq(users.id, id), live(users)));
    return row;
  },

  /** Locks the user's row for the rest of the transaction: one membership change per user at a time. */
  async lockById(db: Executor, id: string): Promise<boolean> {
    const rows = await db.select({ id: users.id }).from(users).where(and(eq(users.id, id), live(users))).for("update");
    return rows.length > 0;
  },

  async findByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
    const [row] = await db.select(userColumns).from(users).where(and(eq(users.email, email), live(users)));
    return row;
  },

  async insert(db: Executor, values: { email: string; fullName: string | null; isSuperadmin: boolean; now: Date }): Promise<UserRow> {
    const [row] = await db
      .insert(users)
      .values({ email: values.email, fullName: values.fullName, isSuperadmin: values.isSuperadmin, createdAt: values.now, updatedAt: values.now })
      .returning(userColumns);
    return row!;
  },

  async update(db: Executor, id: string, values: Partial<typeof users.$inferInsert>): Promise<UserRow | undefined> {
    const [row] = await db.update(users).set(values).where(and(eq(users.id, id), live(users))).returning(userColumns);
    return row;
  },
};
