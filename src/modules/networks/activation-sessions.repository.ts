import { and, asc, eq, gt, inArray, isNull, lte } from "drizzle-orm";
import { activationSessions, deviceMemberships, devices, portalNetworks, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";
import { listingColumns, sessionColumns, type SessionRow, type EndReason } from "./networks.repository.js";

const lockMemberships = async (db: Executor, ids: string[]): Promise<void> => {
  await db.select({ id: deviceMemberships.id }).from(deviceMemberships).where(inArray(deviceMemberships.id, ids)).orderBy(deviceMemberships.id).for("update");
};

/** Activations: the time-boxed sessions that keep a device authorized. */
export const activationSessionsRepository = {
  async insertSession(db: Executor, v: typeof activationSessions.$inferInsert): Promise<SessionRow> {
    const [row] = await db.insert(activationSessions).values(v).returning(sessionColumns);
    return row!;
  },

  /**
   * Ends the open sessions of these memberships; returns the ended ones. The memberships are
   * locked first (FOR UPDATE, in id order), as an activation locks its membership before it
   * replaces the running session: membership, then session, whichever path ends or starts one.
   */
  async endSessions(db: Executor, membershipIds: string[], reason: EndReason, now: Date): Promise<SessionRow[]> {
    if (membershipIds.length === 0) return [];
    await lockMemberships(db, membershipIds);
    return db
      .update(activationSessions)
      .set({ endedAt: now, endReason: reason })
      .where(and(inArray(activationSessions.membershipId, membershipIds), isNull(activationSessions.endedAt)))
      .returning(sessionColumns);
  },

  /** One activation; `lock` takes its row FOR UPDATE (after its membership's, see endSessions). */
  session: async (db: Executor, orgId: string, id: string, opts: { lock: boolean }): Promise<SessionRow | undefined> => {
    const query = db.select(sessionColumns).from(activationSessions).where(idInOrg(activationSessions, orgId, id));
    return (await (opts.lock ? query.for("update") : query))[0];
  },

  /** Open sessions whose time is up (of one organization, or all): ended as expired by the reconciliation. */
  async expireSessions(db: Executor, now: Date, orgId?: string): Promise<SessionRow[]> {
    const due = and(isNull(activationSessions.endedAt), lte(activationSessions.expiresAt, now), orgId ? eq(activationSessions.organizationId, orgId) : undefined);
    // Their memberships first, as everything that ends a session locks them (see endSessions).
    const memberships = (await db.selectDistinct({ id: activationSessions.membershipId }).from(activationSessions).where(due)).map((r) => r.id);
    if (memberships.length === 0) return [];
    await lockMemberships(db, memberships);
    const ended = await db
      .update(activationSessions)
      .set({ endedAt: now, endReason: "expired" })
      .where(and(due, inArray(activationSessions.membershipId, memberships)))
      .returning(sessionColumns);
    const ids = ended.map((s) => s.membershipId);
    if (ids.length > 0) {
      await db
        .update(deviceMemberships)
        .set({ state: "activation_expired", updatedAt: now })
        .where(and(inArray(deviceMemberships.id, ids), eq(deviceMemberships.state, "active_authorized")));
    }
    return ended;
  },

  async activeSessionsOfOrg(db: Executor, orgId: string, now: Date) {
    return db
      .select({ session: sessionColumns, ...listingColumns, networkId: portalNetworks.id })
      .from(activationSessions)
      .innerJoin(deviceMemberships, eq(deviceMemberships.id, activationSessions.membershipId))
      .innerJoin(devices, eq(devices.id, deviceMemberships.deviceId))
      .innerJoin(users, eq(users.id, activationSessions.userId))
      .innerJoin(portalNetworks, eq(portalNetworks.id, deviceMemberships.portalNetworkId))
      .where(and(eq(activationSessions.organizationId, orgId), isNull(activationSessions.endedAt), gt(activationSessions.expiresAt, now)))
      .orderBy(asc(activationSessions.expiresAt));
  },
};
