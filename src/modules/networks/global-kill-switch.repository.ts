import { and, asc, count, desc, eq, gt, isNull, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { activationSessions, deviceMemberships, devices, killSwitchEvents, organizations, portalNetworks, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";
import { killSwitchColumns } from "./networks.repository.js";

const triggeredBy = alias(users, "triggered_by");
const liftedBy = alias(users, "lifted_by");
// A left-joined person is all nulls when absent (the service reads `id` to tell).
const person = (t: typeof users | typeof triggeredBy | typeof liftedBy) => ({ id: t.id, email: t.email, fullName: t.fullName, deleted: sql<boolean>`(${t.deletedAt} is not null)` });

/** Global kill switches (no organization: every network of the person, superadmins only) and what one would cut. */
export const globalKillSwitchRepository = {
  /** A page of global kill switches, newest first, with the person and who triggered and lifted it (one statement, and one count). */
  async page(db: Executor, q: { inForce?: boolean; limit: number; offset: number }) {
    const where: SQL[] = [isNull(killSwitchEvents.organizationId), eq(killSwitchEvents.scope, "global")];
    if (q.inForce === true) where.push(isNull(killSwitchEvents.liftedAt));
    if (q.inForce === false) where.push(sql`${killSwitchEvents.liftedAt} is not null`);
    const [rows, [total]] = await Promise.all([
      db
        .select({ event: killSwitchColumns, target: person(users), triggeredBy: person(triggeredBy), liftedBy: person(liftedBy) })
        .from(killSwitchEvents)
        .innerJoin(users, eq(users.id, killSwitchEvents.targetUserId))
        .leftJoin(triggeredBy, eq(triggeredBy.id, killSwitchEvents.triggeredByUserId))
        .leftJoin(liftedBy, eq(liftedBy.id, killSwitchEvents.liftedByUserId))
        .where(and(...where))
        .orderBy(desc(killSwitchEvents.createdAt), desc(killSwitchEvents.id))
        .limit(q.limit)
        .offset(q.offset),
      db.select({ n: count() }).from(killSwitchEvents).where(and(...where)),
    ]);
    return { rows, total: total?.n ?? 0 };
  },

  /** One global kill switch with its people (after a change, for the answer). */
  async one(db: Executor, id: string) {
    const [row] = await db
      .select({ event: killSwitchColumns, target: person(users), triggeredBy: person(triggeredBy), liftedBy: person(liftedBy) })
      .from(killSwitchEvents)
      .innerJoin(users, eq(users.id, killSwitchEvents.targetUserId))
      .leftJoin(triggeredBy, eq(triggeredBy.id, killSwitchEvents.triggeredByUserId))
      .leftJoin(liftedBy, eq(liftedBy.id, killSwitchEvents.liftedByUserId))
      .where(eq(killSwitchEvents.id, id));
    return row;
  },

  /** The global kill switch in force on this person, if any. */
  inForceOn: async (db: Executor, userId: string): Promise<string | undefined> =>
    (
      await db
        .select({ id: killSwitchEvents.id })
        .from(killSwitchEvents)
        .where(and(eq(killSwitchEvents.targetUserId, userId), isNull(killSwitchEvents.organizationId), eq(killSwitchEvents.scope, "global"), isNull(killSwitchEvents.liftedAt)))
        .limit(1)
    )[0]?.id,

  /** A live account's name (the person a kill switch is about). */
  person: async (db: Executor, userId: string) => (await db.select({ id: users.id, email: users.email, fullName: users.fullName }).from(users).where(and(eq(users.id, userId), live(users))))[0],

  /**
   * Every device membership of the person in every organization, with the organization, network and
   * device names and whether an activation runs now: what a global kill switch would cut (one statement).
   */
  async reachOf(db: Executor, userId: string, now: Date) {
    return db
      .select({
        membershipId: deviceMemberships.id,
        state: deviceMemberships.state,
        organizationName: organizations.name,
        networkName: portalNetworks.name,
        deviceName: sql<string>`coalesce(${devices.nickname}, ${devices.nodeId})`,
        activeUntil: activationSessions.expiresAt,
      })
      .from(deviceMemberships)
      .innerJoin(devices, eq(devices.id, deviceMemberships.deviceId))
      .innerJoin(portalNetworks, eq(portalNetworks.id, deviceMemberships.portalNetworkId))
      .innerJoin(organizations, eq(organizations.id, deviceMemberships.organizationId))
      .leftJoin(activationSessions, and(eq(activationSessions.membershipId, deviceMemberships.id), isNull(activationSessions.endedAt), gt(activationSessions.expiresAt, now)))
      .where(and(eq(deviceMemberships.userId, userId), live(deviceMemberships), live(devices), live(portalNetworks), live(organizations)))
      .orderBy(asc(organizations.name), asc(portalNetworks.name), asc(devices.nickname), asc(devices.nodeId));
  },
};
