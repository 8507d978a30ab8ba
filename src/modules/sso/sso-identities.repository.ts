import { and, eq } from "drizzle-orm";
import { ssoIdentities } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";

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

  async deleteById(db: Executor, id: string): Promise<void> {
    await db.delete(ssoIdentities).where(eq(ssoIdentities.id, id));
  },
};
