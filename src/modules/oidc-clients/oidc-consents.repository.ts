import { and, eq, sql } from "drizzle-orm";
import { oidcClients, oidcConsents } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";

export interface ConsentView {
  clientId: string;
  clientName: string;
  scopes: string[];
  updatedAt: Date;
}

/** The scopes each user agreed to give each client, remembered until the user withdraws them. */
export const oidcConsentsRepository = {
  listForUser: (db: Executor, userId: string): Promise<ConsentView[]> =>
    db
      .select({ clientId: oidcConsents.clientId, clientName: oidcClients.name, scopes: oidcConsents.scopes, updatedAt: oidcConsents.updatedAt })
      .from(oidcConsents)
      .innerJoin(oidcClients, eq(oidcClients.clientId, oidcConsents.clientId))
      .where(eq(oidcConsents.userId, userId)),

  async scopesOf(db: Executor, userId: string, clientId: string): Promise<string[]> {
    const [row] = await db
      .select({ scopes: oidcConsents.scopes })
      .from(oidcConsents)
      .where(and(eq(oidcConsents.userId, userId), eq(oidcConsents.clientId, clientId)));
    return row?.scopes ?? [];
  },

  /** Adds scopes to what the user gave this client before (kept sorted and distinct). */
  async add(db: Executor, v: { userId: string; clientId: string; scopes: string[]; now: Date }): Promise<void> {
    await db
      .insert(oidcConsents)
      .values({ userId: v.userId, clientId: v.clientId, scopes: [...new Set(v.scopes)].sort(), createdAt: v.now, updatedAt: v.now })
      .onConflictDoUpdate({
        target: [oidcConsents.userId, oidcConsents.clientId],
        set: { scopes: sql`array(select distinct unnest(${oidcConsents.scopes} || excluded.scopes) order by 1)`, updatedAt: v.now },
      });
  },

  /** Withdraws one user's consent to one client; false when there was none. */
  async delete(db: Executor, userId: string, clientId: string): Promise<boolean> {
    const rows = await db
      .delete(oidcConsents)
      .where(and(eq(oidcConsents.userId, userId), eq(oidcConsents.clientId, clientId)))
      .returning({ clientId: oidcConsents.clientId });
    return rows.length > 0;
  },

  async deleteForClient(db: Executor, clientId: string): Promise<void> {
    await db.delete(oidcConsents).where(eq(oidcConsents.clientId, clientId));
  },
};
