import { and, count, eq, ne } from "drizzle-orm";
import { organizations, ssoConnections, ssoIdentities } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";

const columns = pickColumns(ssoIdentities, ["id", "connectionId", "subject", "userId", "email", "createdAt", "lastLoginAt"]);
export type SsoIdentityRow = Pick<typeof ssoIdentities.$inferSelect, keyof typeof columns>;

/** People at a connection's identity provider, by their stable subject (never by email). */
export const ssoIdentitiesRepository = {
  async findBySubject(db: Executor, connectionId: string, subject: string): Promise<SsoIdentityRow | undefined> {
    const [row] = await db.select(columns).from(ssoIdentities).where(and(eq(ssoIdentities.connectionId, connectionId), eq(ssoIdentities.subject, subject)));
    return row;
  },

  async insert(db: Executor, v: { connectionId: string; subject: string; userId: string; email: string | null; now: Date }): Promise<SsoIdentityRow> {
    const [row] = await db
      .insert(ssoIdentities)
      .values({ connectionId: v.connectionId, subject: v.subject, userId: v.userId, email: v.email, createdAt: v.now, lastLoginAt: v.now })
      .returning(columns);
    return row!;
  },

  async touch(db: Executor, id: string, email: string | null, now: Date): Promise<void> {
    await db.update(ssoIdentities).set({ lastLoginAt: now, email }).where(eq(ssoIdentities.id, id));
  },

  /** A person's identities at live connections, with the connection and its organization (one statement). */
  listLinkedOfUser: (db: Executor, userId: string) =>
    db
      .select({
        id: ssoIdentities.id,
        connectionId: ssoIdentities.connectionId,
        connectionName: ssoConnections.name,
        kind: ssoConnections.kind,
        enabled: ssoConnections.enabled,
        organizationId: organizations.id,
        organizationName: organizations.name,
        organizationSlug: organizations.slug,
        email: ssoIdentities.email,
        linkedAt: ssoIdentities.createdAt,
        lastUsedAt: ssoIdentities.lastLoginAt,
      })
      .from(ssoIdentities)
      .innerJoin(ssoConnections, and(eq(ssoConnections.id, ssoIdentities.connectionId), live(ssoConnections)))
      .innerJoin(organizations, and(eq(organizations.id, ssoConnections.organizationId), live(organizations)))
      .where(eq(ssoIdentities.userId, userId))
      .orderBy(organizations.name, ssoConnections.name, ssoIdentities.id),

  /** Removes one of this person's identities (another person's is never matched); what it was, if anything. */
  async deleteOfUser(db: Executor, userId: string, id: string): Promise<SsoIdentityRow | undefined> {
    const [row] = await db.delete(ssoIdentities).where(and(eq(ssoIdentities.id, id), eq(ssoIdentities.userId, userId))).returning(columns);
    return row;
  },

  /** The person's identities at enabled, live connections other than this one (other ways in). */
  async countOtherUsable(db: Executor, userId: string, exceptId: string): Promise<number> {
    const [row] = await db
      .select({ n: count() })
      .from(ssoIdentities)
      .innerJoin(ssoConnections, and(eq(ssoConnections.id, ssoIdentities.connectionId), eq(ssoConnections.enabled, true), live(ssoConnections)))
      .where(and(eq(ssoIdentities.userId, userId), ne(ssoIdentities.id, exceptId)));
    return row?.n ?? 0;
  },

  async deleteById(db: Executor, id: string): Promise<void> {
    await db.delete(ssoIdentities).where(eq(ssoIdentities.id, id));
  },
};
