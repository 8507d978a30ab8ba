import { and, desc, eq, inArray, isNull, or, sql } from "drizzle-orm";
import { killSwitchEvents, orgMemberships, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { killSwitchColumns, type KillSwitchRow } from "./networks.repository.js";

/** Kill switches, and the per-person lock that serializes every change to a person's network access. */
export const killSwitchRepository = {
  async insertKillSwitch(db: Executor, v: typeof killSwitchEvents.$inferInsert): Promise<KillSwitchRow> {
    const [row] = await db.insert(killSwitchEvents).values(v).returning(killSwitchColumns);
    return row!;
  },

  killSwitch: async (db: Executor, id: string): Promise<KillSwitchRow | undefined> => (await db.select(killSwitchColumns).from(killSwitchEvents).where(eq(killSwitchEvents.id, id)).for("update"))[0],

  async updateKillSwitch(db: Executor, id: string, v: Partial<typeof killSwitchEvents.$inferInsert>): Promise<KillSwitchRow> {
    const [row] = await db.update(killSwitchEvents).set(v).where(eq(killSwitchEvents.id, id)).returning(killSwitchColumns);
    return row!;
  },

  /** The history an organization's admins see: its own events and global ones about its members. */
  async killSwitchHistory(db: Executor, orgId: string) {
    return db
      .select({ event: killSwitchColumns, targetEmail: users.email, targetName: users.fullName })
      .from(killSwitchEvents)
      .innerJoin(users, eq(users.id, killSwitchEvents.targetUserId))
      .where(
        or(
          eq(killSwitchEvents.organizationId, orgId),
          and(
            isNull(killSwitchEvents.organizationId),
            sql`exists (select 1 from ${orgMemberships} m where m.user_id = ${killSwitchEvents.targetUserId} and m.organization_id = ${orgId})`,
          ),
        ),
      )
      .orderBy(desc(killSwitchEvents.createdAt));
  },

  /** Kill switches in force for this person on this network (organization-wide, global or naming it). */
  async killSwitchInForce(db: Executor, userId: string, network: { id: string; organizationId: string }): Promise<boolean> {
    const rows = await db
      .select({ scope: killSwitchEvents.scope, orgId: killSwitchEvents.organizationId, networkIds: killSwitchEvents.networkIds })
      .from(killSwitchEvents)
      .where(and(eq(killSwitchEvents.targetUserId, userId), isNull(killSwitchEvents.liftedAt)));
    return rows.some(
      (r) => r.scope === "global" || (r.orgId === network.organizationId && (r.scope === "organization" || (r.networkIds ?? []).includes(network.id))),
    );
  },

  /**
   * Serializes everything that changes one person's network access (activation, kill switch, lift,
   * revocation): whichever commits second sees the first. NO KEY UPDATE leaves foreign keys alone.
   */
  async lockPerson(db: Executor, userId: string): Promise<void> {
    await db.select({ id: users.id }).from(users).where(eq(users.id, userId)).for("no key update");
  },

  /** The same for several people at once, in id order (so two such transactions queue, not deadlock). */
  async lockPeople(db: Executor, userIds: string[]): Promise<void> {
    if (userIds.length > 0) await db.select({ id: users.id }).from(users).where(inArray(users.id, userIds)).orderBy(users.id).for("no key update");
  },

  isSuperadmin: async (db: Executor, userId: string | null): Promise<boolean> =>
    userId !== null && (await db.select({ s: users.isSuperadmin }).from(users).where(eq(users.id, userId)))[0]?.s === true,
};
