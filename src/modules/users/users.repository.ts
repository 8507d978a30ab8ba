import { noteChanged } from "../../infra/announced-cache.js";
import { and, count, eq, ilike, inArray, isNotNull, or, sql, type SQL } from "drizzle-orm";
import { pickColumns } from "../../infra/columns.js";
import { organizations, passwordCredentials, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { preparedQuery } from "../../infra/prepared.js";
import { live } from "../../infra/soft-delete.js";

/** Called by every write this process makes to what a profile shows, before it commits (user-cache.ts hears it). */
export function noteProfileChanged(userId: string | "*"): void {
  noteChanged("user", userId);
}

/** The user columns any service may read: never a credential. */
export const userColumns = pickColumns(users, ["id", "email", "fullName", "avatarUrl", "emailVerifiedAt", "emailVerifiedVia", "managedByOrganizationId", "status", "isSuperadmin", "suspendedAt", "lastLoginAt", "createdAt", "updatedAt"]);

export type UserStatus = (typeof users.status.enumValues)[number];
export type EmailVerifiedVia = NonNullable<(typeof users.$inferSelect)["emailVerifiedVia"]>;

/** A user as services see it: the columns of `userColumns`, typed from the table. */
export type UserRow = Pick<typeof users.$inferSelect, keyof typeof userColumns>;

/** What a new account starts with; everything else takes the table's defaults. */
export type NewUser = Pick<typeof users.$inferInsert, "email" | "fullName" | "isSuperadmin" | "managedByOrganizationId" | "emailVerifiedAt" | "emailVerifiedVia">;

/** What the signed-in caller and `GET me` are built from (src/modules/users/user-cache.ts). */
export type ProfileRow = UserRow & { hasPassword: boolean; managedByName: (typeof organizations.$inferSelect)["name"] | null };

// Prepared once per database (src/infra/prepared.ts).
const findProfile = preparedQuery("users_find_profile", (db) =>
  db
    .select({ ...userColumns, hasPassword: sql<boolean>`${passwordCredentials.userId} is not null`, managedByName: organizations.name })
    .from(users)
    .leftJoin(passwordCredentials, eq(passwordCredentials.userId, users.id))
    .leftJoin(organizations, and(eq(organizations.id, users.managedByOrganizationId), live(organizations)))
    .where(and(eq(users.id, sql.placeholder("id")), live(users))),
);

const findByEmail = preparedQuery("users_find_by_email", (db) => db.select(userColumns).from(users).where(and(eq(users.email, sql.placeholder("email")), live(users))));

export const usersRepository = {
  async findById(db: Executor, id: string): Promise<UserRow | undefined> {
    const [row] = await db.select(userColumns).from(users).where(and(eq(users.id, id), live(users)));
    return row;
  },

  /**
   * An account's profile: the user, whether a password is set, and the name of the organization
   * managing it, in one round trip (a prepared statement). Behind every authenticated call (through
   * the user cache) and GET me.
   */
  async findProfile(db: Executor, id: string): Promise<ProfileRow | undefined> {
    return (await findProfile(db, { id }))[0];
  },

  /** Locks the user's row for the rest of the transaction: one membership change per user at a time. */
  async lockById(db: Executor, id: string): Promise<boolean> {
    const rows = await db.select({ id: users.id }).from(users).where(and(eq(users.id, id), live(users))).for("update");
    return rows.length > 0;
  },

  async findByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
    const [row] = await findByEmail(db, { email });
    return row;
  },

  async insert(db: Executor, values: NewUser & { now: Date }): Promise<UserRow> {
    const { now, ...user } = values;
    const [row] = await db.insert(users).values({ ...user, createdAt: now, updatedAt: now }).returning(userColumns);
    return row!;
  },

  async update(db: Executor, id: string, values: Partial<typeof users.$inferInsert>): Promise<UserRow | undefined> {
    noteProfileChanged(id);
    const [row] = await db.update(users).set(values).where(and(eq(users.id, id), live(users))).returning(userColumns);
    return row;
  },

  /**
   * Records that the owner proved the address. Keeps the first verification time and the strongest
   * proof seen: a mailed link outranks a provider's claim, which outranks a superadmin's word.
   */
  async markEmailVerified(db: Executor, user: UserRow, via: EmailVerifiedVia, now: Date): Promise<UserRow> {
    const keep = user.emailVerifiedVia && VIA_STRENGTH[user.emailVerifiedVia] >= VIA_STRENGTH[via];
    noteProfileChanged(user.id);
    const [row] = await db
      .update(users)
      .set({ emailVerifiedAt: user.emailVerifiedAt ?? now, emailVerifiedVia: keep ? user.emailVerifiedVia : via, updatedAt: now })
      .where(and(eq(users.id, user.id), live(users)))
      .returning(userColumns);
    return row ?? user;
  },

  /**
   * A page of live accounts, by address, whose address or name contains `text` (case-insensitive),
   * limited to the accounts managed by `managedBy` when given, and to operators, suspended or
   * deleted accounts when `show` says so.
   */
  async search(db: Executor, q: { text?: string; managedBy?: string[]; show?: "all" | "superadmins" | "suspended" | "deleted"; limit: number; offset: number }): Promise<{ rows: UserRow[]; total: number }> {
    // Deleted accounts are listed only when asked for (an operator restoring one), and then only they.
    const where: SQL[] = [q.show === "deleted" ? isNotNull(users.deletedAt) : live(users)];
    if (q.show === "superadmins") where.push(eq(users.isSuperadmin, true));
    if (q.show === "suspended") where.push(eq(users.status, "suspended"));
    if (q.text) {
      const pattern = `%${escapeLike(q.text)}%`;
      where.push(or(ilike(users.email, pattern), ilike(users.fullName, pattern))!);
    }
    if (q.managedBy) where.push(inArray(users.managedByOrganizationId, q.managedBy));
    const [rows, [total]] = await Promise.all([
      db.select(userColumns).from(users).where(and(...where)).orderBy(users.email).limit(q.limit).offset(q.offset),
      db.select({ n: count() }).from(users).where(and(...where)),
    ]);
    return { rows, total: total?.n ?? 0 };
  },

  /** Names of accounts by id, deleted ones included (an audit record outlives its subject). */
  async namesByIds(db: Executor, ids: string[]): Promise<Array<{ id: string; email: string; fullName: string | null; deleted: boolean }>> {
    if (ids.length === 0) return [];
    return db.select({ id: users.id, email: users.email, fullName: users.fullName, deleted: sql<boolean>`${users.deletedAt} is not null` }).from(users).where(inArray(users.id, ids));
  },

  /** A soft-deleted account (with `search` and `namesByIds`, the only queries that see deleted rows). */
  async findDeleted(db: Executor, id: string): Promise<UserRow | undefined> {
    const [row] = await db.select(userColumns).from(users).where(and(eq(users.id, id), isNotNull(users.deletedAt)));
    return row;
  },

  /** Brings a soft-deleted account back; a unique violation when its address was taken meanwhile. */
  async restore(db: Executor, id: string, now: Date): Promise<UserRow | undefined> {
    noteProfileChanged(id);
    const [row] = await db.update(users).set({ deletedAt: null, updatedAt: now }).where(and(eq(users.id, id), isNotNull(users.deletedAt))).returning(userColumns);
    return row;
  },

  /** Ends an organization's management of an account (it left, or was removed from, that organization). */
  async releaseFromOrganization(db: Executor, userId: string, organizationId: string): Promise<void> {
    noteProfileChanged(userId);
    await db.update(users).set({ managedByOrganizationId: null }).where(and(eq(users.id, userId), eq(users.managedByOrganizationId, organizationId)));
  },

  /** The organization is gone: nobody manages its accounts any more. */
  async releaseAllFromOrganization(db: Executor, organizationId: string): Promise<void> {
    noteProfileChanged("*");
    await db.update(users).set({ managedByOrganizationId: null }).where(eq(users.managedByOrganizationId, organizationId));
  },
};

const escapeLike = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);

const VIA_STRENGTH: Record<EmailVerifiedVia, number> = { email_link: 3, provider: 2, superadmin: 1 };
