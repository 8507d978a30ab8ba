import { and, asc, eq, gt, inArray, isNull, sql, type SQL } from "drizzle-orm";
import { activationSessions, deviceMemberships, devices, networkApprovals, portalNetworks, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";
import { live } from "../../infra/soft-delete.js";
import { listingColumns, membershipColumns, type MembershipRow } from "./networks.repository.js";

/**
 * The one definition of "this device should be authorized on this network now": a live membership
 * of a live device on a live, active network, with an open activation that has not expired.
 * (Used with device_memberships joined to devices and portal_networks.)
 */
const shouldBeAuthorized = (now: Date) =>
  sql<boolean>`(${deviceMemberships.deletedAt} is null and ${devices.deletedAt} is null and ${portalNetworks.deletedAt} is null and ${portalNetworks.isActive}
    and exists (select 1 from ${activationSessions} s where s.membership_id = ${deviceMemberships.id} and s.ended_at is null and s.expires_at > ${now.toISOString()}::timestamptz))`;

/** Memberships with their node on their ZeroTier network, what the controller says of it, and what it should say now. */
const controllerIntent = (db: Executor, where: SQL | undefined, now: Date) =>
  db
    .select({
      membershipId: deviceMemberships.id,
      organizationId: deviceMemberships.organizationId,
      nodeId: devices.nodeId,
      zerotierNetworkId: portalNetworks.zerotierNetworkId,
      currentlyAuthorized: deviceMemberships.currentlyAuthorized,
      joinSeen: deviceMemberships.joinSeen,
      desired: shouldBeAuthorized(now),
    })
    .from(deviceMemberships)
    .innerJoin(devices, eq(devices.id, deviceMemberships.deviceId))
    .innerJoin(portalNetworks, eq(portalNetworks.id, deviceMemberships.portalNetworkId))
    .where(where);

/** Devices on networks (memberships), and what the controller should say about each. */
export const deviceMembershipsRepository = {
  membership: async (db: Executor, orgId: string, id: string): Promise<MembershipRow | undefined> =>
    (await db.select(membershipColumns).from(deviceMemberships).where(and(idInOrg(deviceMemberships, orgId, id), live(deviceMemberships))).for("update"))[0],

  membershipOf: async (db: Executor, deviceId: string, networkId: string): Promise<MembershipRow | undefined> =>
    (await db.select(membershipColumns).from(deviceMemberships).where(and(eq(deviceMemberships.deviceId, deviceId), eq(deviceMemberships.portalNetworkId, networkId), live(deviceMemberships))))[0],

  async insertMembership(db: Executor, v: typeof deviceMemberships.$inferInsert): Promise<MembershipRow> {
    const [row] = await db.insert(deviceMemberships).values(v).returning(membershipColumns);
    return row!;
  },

  async updateMemberships(db: Executor, ids: string[], v: Partial<typeof deviceMemberships.$inferInsert>): Promise<void> {
    if (ids.length > 0) await db.update(deviceMemberships).set(v).where(inArray(deviceMemberships.id, ids));
  },

  /** A person's live memberships on some networks (all of theirs in the organization without `networkIds`). */
  async membershipsOfUser(db: Executor, userId: string, where: { orgId?: string; networkIds?: string[]; deviceId?: string; approvalId?: string }): Promise<MembershipRow[]> {
    if (where.networkIds && where.networkIds.length === 0) return [];
    return db
      .select(membershipColumns)
      .from(deviceMemberships)
      .where(
        and(
          eq(deviceMemberships.userId, userId),
          live(deviceMemberships),
          where.orgId ? eq(deviceMemberships.organizationId, where.orgId) : undefined,
          where.networkIds ? inArray(deviceMemberships.portalNetworkId, where.networkIds) : undefined,
          where.deviceId ? eq(deviceMemberships.deviceId, where.deviceId) : undefined,
          where.approvalId ? eq(deviceMemberships.approvalId, where.approvalId) : undefined,
        ),
      );
  },

  membershipsOfNetwork: async (db: Executor, networkId: string): Promise<MembershipRow[]> =>
    db.select(membershipColumns).from(deviceMemberships).where(and(eq(deviceMemberships.portalNetworkId, networkId), live(deviceMemberships))),

  /** Memberships with everything a person reading a listing needs: device nickname, owner, network, session. */
  async enrichedMemberships(db: Executor, where: { orgId: string; userId?: string; networkId?: string; ids?: string[] }, now: Date) {
    if (where.ids && where.ids.length === 0) return [];
    return db
      .select({
        membership: membershipColumns,
        ...listingColumns,
        hostname: devices.hostname,
        zerotierNetworkId: portalNetworks.zerotierNetworkId,
        sessionId: activationSessions.id,
        sessionExpiresAt: activationSessions.expiresAt,
        sessionAuthenticatedAt: activationSessions.authenticatedAt,
      })
      .from(deviceMemberships)
      .innerJoin(devices, eq(devices.id, deviceMemberships.deviceId))
      .innerJoin(users, eq(users.id, deviceMemberships.userId))
      .innerJoin(portalNetworks, eq(portalNetworks.id, deviceMemberships.portalNetworkId))
      .leftJoin(
        activationSessions,
        and(eq(activationSessions.membershipId, deviceMemberships.id), isNull(activationSessions.endedAt), gt(activationSessions.expiresAt, now)),
      )
      .where(
        and(
          eq(deviceMemberships.organizationId, where.orgId),
          live(deviceMemberships),
          live(portalNetworks),
          where.userId ? eq(deviceMemberships.userId, where.userId) : undefined,
          where.networkId ? eq(deviceMemberships.portalNetworkId, where.networkId) : undefined,
          where.ids ? inArray(deviceMemberships.id, where.ids) : undefined,
        ),
      )
      .orderBy(asc(portalNetworks.name), asc(devices.nickname), asc(devices.nodeId));
  },

  /**
   * What the controller should say for these memberships right now (deleted ones included: their
   * devices must come off): authorized only with an open, unexpired activation on a live network.
   */
  async syncTargets(db: Executor, ids: string[], now: Date) {
    if (ids.length === 0) return [];
    return controllerIntent(db, inArray(deviceMemberships.id, ids), now);
  },

  /**
   * Every membership Keyward has recorded on a network (removed ones too), with whether its device
   * should be authorized now: one query per network for the reconciliation pass.
   */
  membershipNodes: async (db: Executor, networkId: string, now: Date) => controllerIntent(db, eq(deviceMemberships.portalNetworkId, networkId), now),

  /** Networks of every organization on which this person has live memberships (a global kill switch). */
  async networkIdsOfPerson(db: Executor, userId: string): Promise<string[]> {
    const rows = await db.selectDistinct({ id: deviceMemberships.portalNetworkId }).from(deviceMemberships).where(and(eq(deviceMemberships.userId, userId), live(deviceMemberships)));
    const approvals = await db.selectDistinct({ id: networkApprovals.portalNetworkId }).from(networkApprovals).where(eq(networkApprovals.userId, userId));
    return [...new Set([...rows, ...approvals].map((r) => r.id))];
  },
};
