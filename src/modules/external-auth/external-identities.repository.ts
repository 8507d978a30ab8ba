import { and, asc, count, eq, ne } from "drizzle-orm";
import { externalIdentities } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import type { ProviderName } from "./external-auth.schemas.js";
import type { ExternalProfile } from "./providers/idp.types.js";

const identityColumns = pickColumns(externalIdentities, ["id", "userId", "provider", "subject", "email", "emailVerified", "username", "displayName", "avatarUrl", "createdAt", "lastUsedAt"]);

export type IdentityRow = Pick<typeof externalIdentities.$inferSelect, keyof typeof identityColumns>;

const profileColumns = (p: ExternalProfile) => ({
  email: p.email?.slice(0, 320) ?? null,
  emailVerified: p.emailVerified,
  username: p.username?.slice(0, 255) ?? null,
  displayName: p.displayName?.slice(0, 255) ?? null,
  avatarUrl: p.avatarUrl,
});

export const externalIdentitiesRepository = {
  async findBySubject(db: Executor, provider: ProviderName, subject: string): Promise<IdentityRow | undefined> {
    const [row] = await db
      .select(identityColumns)
      .from(externalIdentities)
      .where(and(eq(externalIdentities.provider, provider), eq(externalIdentities.subject, subject)));
    return row;
  },

  listForUser(db: Executor, userId: string): Promise<IdentityRow[]> {
    return db.select(identityColumns).from(externalIdentities).where(eq(externalIdentities.userId, userId)).orderBy(asc(externalIdentities.createdAt));
  },

  async countOthers(db: Executor, userId: string, provider: ProviderName): Promise<number> {
    const [row] = await db
      .select({ n: count() })
      .from(externalIdentities)
      .where(and(eq(externalIdentities.userId, userId), ne(externalIdentities.provider, provider)));
    return row?.n ?? 0;
  },

  async insert(db: Executor, userId: string, profile: ExternalProfile, now: Date): Promise<IdentityRow> {
    const [row] = await db
      .insert(externalIdentities)
      .values({ userId, provider: profile.provider, subject: profile.subject, ...profileColumns(profile), createdAt: now, lastUsedAt: now })
      .returning(identityColumns);
    return row!;
  },

  /** Keeps the displayed details current at each sign-in. */
  async touch(db: Executor, id: string, profile: ExternalProfile, now: Date): Promise<void> {
    await db.update(externalIdentities).set({ ...profileColumns(profile), lastUsedAt: now }).where(eq(externalIdentities.id, id));
  },

  async deleteById(db: Executor, id: string): Promise<void> {
    await db.delete(externalIdentities).where(eq(externalIdentities.id, id));
  },

  async delete(db: Executor, userId: string, provider: ProviderName): Promise<IdentityRow | undefined> {
    const [row] = await db
      .delete(externalIdentities)
      .where(and(eq(externalIdentities.userId, userId), eq(externalIdentities.provider, provider)))
      .returning(identityColumns);
    return row;
  },
};
