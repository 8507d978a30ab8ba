import { and, asc, desc, eq, gt, inArray, isNull, lte, or, sql } from "drizzle-orm";
import {
  activationSessions,
  deviceMemberships,
  devices,
  jobLeases,
  killSwitchEvents,
  networkApprovals,
  networkControllers,
  networkManagers,
  orgMemberships,
  portalNetworks,
  users,
} from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";

export type ControllerRow = typeof networkControllers.$inferSelect;
export type PortalNetworkRow = typeof portalNetworks.$inferSelect;
export type DeviceRow = typeof devices.$inferSelect;
export type ApprovalRow = typeof networkApprovals.$inferSelect;
export type MembershipRow = typeof deviceMemberships.$inferSelect;
export type SessionRow = typeof activationSessions.$inferSelect;
export type KillSwitchRow = typeof killSwitchEvents.$inferSelect;
export type MembershipState = MembershipRow["state"];
export type EndReason = NonNullable<SessionRow["endReason"]>;

/** Approval states that still stand (a person holds at most one per network). */
const LIVE_APPROVAL = ["pending", "approved", "suspended"] as const;

/**
 * The one definition of "this device should be authorized on this network now": a live membership
 * of a live device on a live, active network, with an open activation that has not expired.
 * (Used with device_memberships joined to devices and portal_networks.)
 */
const shouldBeAuthorized = (now: Date) =>
  sql<boolean>`(${deviceMemberships.deletedAt} is null and ${devices.deletedAt} is null and ${portalNetworks.deletedAt} is null and ${portalNetworks.isActive}
    and exists (select 1 from ${activationSessions} s where s.membership_id = ${deviceMemberships.id} and s.ended_at is null and s.expires_at > ${now.toISOString()}::timestamptz))`;

export const networksRepository = {
  // --- controller connection -------------------------------------------------------------------
  controller: async (db: Executor, orgId: string): Promise<ControllerRow | undefined> =>
    (await db.select().from(networkControllers).where(eq(networkControllers.organizationId, orgId)))[0],

  async upsertController(db: Executor, v: typeof networkControllers.$inferInsert): Promise<ControllerRow> {
    const [row] = await db
      .insert(networkControllers)
      .values(v)
      .onConflictDoUpdate({
        target: networkControllers.organizationId,
        set: { mode: v.mode, baseUrl: v.baseUrl, tokenSealed: v.tokenSealed, controllerAddress: v.controllerAddress, lastCheckedAt: v.lastCheckedAt, updatedBy: v.updatedBy, updatedAt: v.updatedAt },
      })
      .returning();
    return row!;
  },

  deleteController: async (db: Executor, orgId: string): Promise<boolean> =>
    (await db.delete(networkControllers).where(eq(networkControllers.organizationId, orgId)).returning({ id: networkControllers.organizationId })).length > 0,

  // --- portal networks --------------------------------------------------------------------------
  async listNetworks(db: Executor, orgId: string, includeInactive: boolean): Promise<PortalNetworkRow[]> {
    return db
      .select()
      .from(portalNetworks)
      .where(and(eq(portalNetworks.organizationId, orgId), live(portalNetworks), includeInactive ? undefined : eq(portalNetworks.isActive, true)))
      .orderBy(asc(portalNetworks.name));
  },

  network: async (db: Executor, orgId: string, id: string): Promise<PortalNetworkRow | undefined> =>
    (await db.select().from(portalNetworks).where(and(eq(portalNetworks.id, id), eq(portalNetworks.organizationId, orgId), live(portalNetworks))))[0],

  networkAnyOrg: async (db: Executor, id: string): Promise<PortalNetworkRow | undefined> => (await db.select().from(portalNetworks).where(eq(portalNetworks.id, id)))[0],

  /** Locks the network row: approvals and activations on it serialize with its deletion. */
  lockNetwork: async (db: Executor, orgId: string, id: string): Promise<PortalNetworkRow | undefined> =>
    (await db.select().from(portalNetworks).where(and(eq(portalNetworks.id, id), eq(portalNetworks.organizationId, orgId), live(portalNetworks))).for("update"))[0],

  async insertNetwork(db: Executor, v: typeof portalNetworks.$inferInsert): Promise<PortalNetworkRow> {
    const [row] = await db.insert(portalNetworks).values(v).returning();
    return row!;
  },

  async updateNetwork(db: Executor, id: string, v: Partial<typeof portalNetworks.$inferInsert>): Promise<PortalNetworkRow> {
    const [row] = await db.update(portalNetworks).set(v).where(eq(portalNetworks.id, id)).returning();
    return row!;
  },

  importedNetworkIds: async (db: Executor, orgId: string): Promise<string[]> =>
    (await db.select({ z: portalNetworks.zerotierNetworkId }).from(portalNetworks).where(and(eq(portalNetworks.organizationId, orgId), live(portalNetworks)))).map((r) => r.z),

  /** Counts shown beside each network: approved people and running activations. */
  async networkCounts(db: Executor, ids: string[], now: Date): Promise<Map<string, { approved: number; active: number }>> {
    const out = new Map(ids.map((id) => [id, { approved: 0, active: 0 }]));
    if (ids.length === 0) return out;
    const approved = await db
      .select({ id: networkApprovals.portalNetworkId, n: sql<number>`count(*)::int` })
      .from(networkApprovals)
      .where(and(inArray(networkApprovals.portalNetworkId, ids), eq(networkApprovals.state, "approved")))
      .groupBy(networkApprovals.portalNetworkId);
    const active = await db
      .select({ id: deviceMemberships.portalNetworkId, n: sql<number>`count(*)::int` })
      .from(activationSessions)
      .innerJoin(deviceMemberships, eq(deviceMemberships.id, activationSessions.membershipId))
      .where(and(inArray(deviceMemberships.portalNetworkId, ids), isNull(activationSessions.endedAt), gt(activationSessions.expiresAt, now)))
      .groupBy(deviceMemberships.portalNetworkId);
    for (const r of approved) out.get(r.id)!.approved = r.n;
    for (const r of active) out.get(r.id)!.active = r.n;
    return out;
  },

  /** The network's named managers who are still live members of its organization. */
  managers: async (db: Executor, network: { id: string; organizationId: string }): Promise<Array<{ userId: string; email: string; fullName: string | null }>> =>
    db
      .select({ userId: networkManagers.userId, email: users.email, fullName: users.fullName })
      .from(networkManagers)
      .innerJoin(users, eq(users.id, networkManagers.userId))
      .innerJoin(orgMemberships, and(eq(orgMemberships.userId, users.id), eq(orgMemberships.organizationId, network.organizationId), live(orgMemberships)))
      .where(and(eq(networkManagers.portalNetworkId, network.id), live(users)))
      .orderBy(users.email),

  /** The live networks of the organization this person is a named manager of. */
  managedNetworkIds: async (db: Executor, orgId: string, userId: string): Promise<string[]> =>
    (
      await db
        .select({ id: portalNetworks.id })
        .from(networkManagers)
        .innerJoin(portalNetworks, eq(portalNetworks.id, networkManagers.portalNetworkId))
        .where(and(eq(networkManagers.userId, userId), eq(portalNetworks.organizationId, orgId), live(portalNetworks)))
    ).map((r) => r.id),

  isNamedManager: async (db: Executor, networkId: string, userId: string): Promise<boolean> =>
    (await db.select({ u: networkManagers.userId }).from(networkManagers).where(and(eq(networkManagers.portalNetworkId, networkId), eq(networkManagers.userId, userId)))).length > 0,

  async replaceManagers(db: Executor, networkId: string, userIds: string[], by: string, now: Date): Promise<void> {
    await db.delete(networkManagers).where(eq(networkManagers.portalNetworkId, networkId));
    if (userIds.length > 0) await db.insert(networkManagers).values(userIds.map((userId) => ({ portalNetworkId: networkId, userId, createdBy: by, createdAt: now })));
  },

  /** Owners and admins of the organization, and the network's named managers: who is told about a request. */
  async managerContacts(db: Executor, orgId: string, networkId: string): Promise<Array<{ email: string; fullName: string | null }>> {
    const admins = await db
      .select({ email: users.email, fullName: users.fullName })
      .from(orgMemberships)
      .innerJoin(users, eq(users.id, orgMemberships.userId))
      .where(and(eq(orgMemberships.organizationId, orgId), live(orgMemberships), inArray(orgMemberships.role, ["owner", "admin"]), live(users)));
    const named = await db
      .select({ email: users.email, fullName: users.fullName })
      .from(networkManagers)
      .innerJoin(users, eq(users.id, networkManagers.userId))
      .innerJoin(orgMemberships, and(eq(orgMemberships.userId, users.id), eq(orgMemberships.organizationId, orgId), live(orgMemberships)))
      .where(and(eq(networkManagers.portalNetworkId, networkId), live(users)));
    const seen = new Map<string, { email: string; fullName: string | null }>();
    for (const c of [...admins, ...named]) seen.set(c.email, c);
    return [...seen.values()];
  },

  /** Networks (of every organization) whose members Keyward still has to bring in line. */
  networksToReconcile: async (db: Executor, orgId?: string): Promise<PortalNetworkRow[]> =>
    db
      .select()
      .from(portalNetworks)
      .where(and(orgId ? eq(portalNetworks.organizationId, orgId) : undefined, or(isNull(portalNetworks.deletedAt), isNull(portalNetworks.cleanedUpAt))))
      .orderBy(asc(portalNetworks.organizationId), asc(portalNetworks.id)),

  // --- devices ----------------------------------------------------------------------------------
  devicesOfUser: async (db: Executor, orgId: string, userId: string): Promise<DeviceRow[]> =>
    db.select().from(devices).where(and(eq(devices.organizationId, orgId), eq(devices.userId, userId), live(devices))).orderBy(asc(devices.createdAt)),

  device: async (db: Executor, orgId: string, id: string): Promise<DeviceRow | undefined> =>
    (await db.select().from(devices).where(and(eq(devices.id, id), eq(devices.organizationId, orgId), live(devices))))[0],

  deviceByNode: async (db: Executor, orgId: string, nodeId: string): Promise<DeviceRow | undefined> =>
    (await db.select().from(devices).where(and(eq(devices.organizationId, orgId), eq(devices.nodeId, nodeId), live(devices))))[0],

  async insertDevice(db: Executor, v: typeof devices.$inferInsert): Promise<DeviceRow> {
    const [row] = await db.insert(devices).values(v).returning();
    return row!;
  },

  async updateDevice(db: Executor, id: string, v: Partial<typeof devices.$inferInsert>): Promise<DeviceRow> {
    const [row] = await db.update(devices).set(v).where(eq(devices.id, id)).returning();
    return row!;
  },

  // --- approvals --------------------------------------------------------------------------------
  approval: async (db: Executor, orgId: string, id: string): Promise<ApprovalRow | undefined> =>
    (await db.select().from(networkApprovals).where(and(eq(networkApprovals.id, id), eq(networkApprovals.organizationId, orgId))).for("update"))[0],

  liveApproval: async (db: Executor, userId: string, networkId: string): Promise<ApprovalRow | undefined> =>
    (
      await db
        .select()
        .from(networkApprovals)
        .where(and(eq(networkApprovals.userId, userId), eq(networkApprovals.portalNetworkId, networkId), inArray(networkApprovals.state, [...LIVE_APPROVAL])))
    )[0],

  approvedNetworksOfUser: async (db: Executor, orgId: string, userId: string): Promise<ApprovalRow[]> =>
    db.select().from(networkApprovals).where(and(eq(networkApprovals.organizationId, orgId), eq(networkApprovals.userId, userId), eq(networkApprovals.state, "approved"))),

  async insertApproval(db: Executor, v: typeof networkApprovals.$inferInsert): Promise<ApprovalRow> {
    const [row] = await db.insert(networkApprovals).values(v).returning();
    return row!;
  },

  async updateApproval(db: Executor, id: string, v: Partial<typeof networkApprovals.$inferInsert>): Promise<ApprovalRow> {
    const [row] = await db.update(networkApprovals).set(v).where(eq(networkApprovals.id, id)).returning();
    return row!;
  },

  approvalsOfUser: async (db: Executor, orgId: string, userId: string): Promise<ApprovalRow[]> =>
    db.select().from(networkApprovals).where(and(eq(networkApprovals.organizationId, orgId), eq(networkApprovals.userId, userId))).orderBy(desc(networkApprovals.createdAt)),

  async pendingApprovals(db: Executor, orgId: string, networkIds: string[] | null) {
    if (networkIds && networkIds.length === 0) return [];
    return db
      .select({ approval: networkApprovals, email: users.email, fullName: users.fullName, networkName: portalNetworks.name })
      .from(networkApprovals)
      .innerJoin(users, eq(users.id, networkApprovals.userId))
      .innerJoin(portalNetworks, eq(portalNetworks.id, networkApprovals.portalNetworkId))
      .where(and(eq(networkApprovals.organizationId, orgId), eq(networkApprovals.state, "pending"), live(portalNetworks), networkIds ? inArray(networkApprovals.portalNetworkId, networkIds) : undefined))
      .orderBy(asc(networkApprovals.createdAt));
  },

  /** Suspends (kill switch) or restores (lift) a person's approvals on the given networks. */
  async setApprovalStates(db: Executor, userId: string, networkIds: string[], from: ApprovalRow["state"], to: ApprovalRow["state"], now: Date): Promise<number> {
    if (networkIds.length === 0) return 0;
    const rows = await db
      .update(networkApprovals)
      .set({ state: to, updatedAt: now })
      .where(and(eq(networkApprovals.userId, userId), inArray(networkApprovals.portalNetworkId, networkIds), eq(networkApprovals.state, from)))
      .returning({ id: networkApprovals.id });
    return rows.length;
  },

  /** A person leaves (an organization, or everything): their approvals are revoked and their devices go. */
  async revokeStanding(db: Executor, userId: string, orgId: string | undefined, now: Date): Promise<void> {
    await db
      .update(networkApprovals)
      .set({ state: "revoked", decisionReason: "Left the organization", updatedAt: now })
      .where(and(eq(networkApprovals.userId, userId), inArray(networkApprovals.state, [...LIVE_APPROVAL]), orgId ? eq(networkApprovals.organizationId, orgId) : undefined));
    await db
      .update(devices)
      .set({ deletedAt: now, updatedAt: now })
      .where(and(eq(devices.userId, userId), live(devices), orgId ? eq(devices.organizationId, orgId) : undefined));
    // Managing a network is part of the standing: it does not survive leaving.
    const named = db.select({ id: portalNetworks.id }).from(portalNetworks).where(orgId ? eq(portalNetworks.organizationId, orgId) : undefined);
    await db.delete(networkManagers).where(and(eq(networkManagers.userId, userId), inArray(networkManagers.portalNetworkId, named)));
  },

  // --- device memberships -----------------------------------------------------------------------
  membership: async (db: Executor, orgId: string, id: string): Promise<MembershipRow | undefined> =>
    (await db.select().from(deviceMemberships).where(and(eq(deviceMemberships.id, id), eq(deviceMemberships.organizationId, orgId), live(deviceMemberships))).for("update"))[0],

  membershipOf: async (db: Executor, deviceId: string, networkId: string): Promise<MembershipRow | undefined> =>
    (await db.select().from(deviceMemberships).where(and(eq(deviceMemberships.deviceId, deviceId), eq(deviceMemberships.portalNetworkId, networkId), live(deviceMemberships))))[0],

  async insertMembership(db: Executor, v: typeof deviceMemberships.$inferInsert): Promise<MembershipRow> {
    const [row] = await db.insert(deviceMemberships).values(v).returning();
    return row!;
  },

  async updateMemberships(db: Executor, ids: string[], v: Partial<typeof deviceMemberships.$inferInsert>): Promise<void> {
    if (ids.length > 0) await db.update(deviceMemberships).set(v).where(inArray(deviceMemberships.id, ids));
  },

  /** A person's live memberships on some networks (all of theirs in the organization without `networkIds`). */
  async membershipsOfUser(db: Executor, userId: string, where: { orgId?: string; networkIds?: string[]; deviceId?: string; approvalId?: string }): Promise<MembershipRow[]> {
    if (where.networkIds && where.networkIds.length === 0) return [];
    return db
      .select()
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
    db.select().from(deviceMemberships).where(and(eq(deviceMemberships.portalNetworkId, networkId), live(deviceMemberships))),

  /** Memberships with everything a person reading a listing needs: device nickname, owner, network, session. */
  async enrichedMemberships(db: Executor, where: { orgId: string; userId?: string; networkId?: string; ids?: string[] }, now: Date) {
    if (where.ids && where.ids.length === 0) return [];
    return db
      .select({
        membership: deviceMemberships,
        nodeId: devices.nodeId,
        deviceNickname: devices.nickname,
        hostname: devices.hostname,
        ownerEmail: users.email,
        ownerName: users.fullName,
        networkName: portalNetworks.name,
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
    return db
      .select({
        membershipId: deviceMemberships.id,
        organizationId: deviceMemberships.organizationId,
        nodeId: devices.nodeId,
        zerotierNetworkId: portalNetworks.zerotierNetworkId,
        desired: shouldBeAuthorized(now),
      })
      .from(deviceMemberships)
      .innerJoin(devices, eq(devices.id, deviceMemberships.deviceId))
      .innerJoin(portalNetworks, eq(portalNetworks.id, deviceMemberships.portalNetworkId))
      .where(inArray(deviceMemberships.id, ids));
  },

  /**
   * Every membership Keyward has recorded on a network (removed ones too), with whether its device
   * should be authorized now: one query per network for the reconciliation pass.
   */
  membershipNodes: async (db: Executor, networkId: string, now: Date) =>
    db
      .select({
        membershipId: deviceMemberships.id,
        nodeId: devices.nodeId,
        currentlyAuthorized: deviceMemberships.currentlyAuthorized,
        joinSeen: deviceMemberships.joinSeen,
        desired: shouldBeAuthorized(now),
      })
      .from(deviceMemberships)
      .innerJoin(devices, eq(devices.id, deviceMemberships.deviceId))
      .innerJoin(portalNetworks, eq(portalNetworks.id, deviceMemberships.portalNetworkId))
      .where(eq(deviceMemberships.portalNetworkId, networkId)),

  // --- activation sessions ----------------------------------------------------------------------
  async insertSession(db: Executor, v: typeof activationSessions.$inferInsert): Promise<SessionRow> {
    const [row] = await db.insert(activationSessions).values(v).returning();
    return row!;
  },

  /** Ends the open sessions of these memberships; returns the ended ones. */
  async endSessions(db: Executor, membershipIds: string[], reason: EndReason, now: Date): Promise<SessionRow[]> {
    if (membershipIds.length === 0) return [];
    return db
      .update(activationSessions)
      .set({ endedAt: now, endReason: reason })
      .where(and(inArray(activationSessions.membershipId, membershipIds), isNull(activationSessions.endedAt)))
      .returning();
  },

  session: async (db: Executor, orgId: string, id: string): Promise<SessionRow | undefined> =>
    (await db.select().from(activationSessions).where(and(eq(activationSessions.id, id), eq(activationSessions.organizationId, orgId))).for("update"))[0],

  /** Open sessions whose time is up (of one organization, or all): ended as expired by the reconciliation. */
  async expireSessions(db: Executor, now: Date, orgId?: string): Promise<SessionRow[]> {
    const ended = await db
      .update(activationSessions)
      .set({ endedAt: now, endReason: "expired" })
      .where(and(isNull(activationSessions.endedAt), lte(activationSessions.expiresAt, now), orgId ? eq(activationSessions.organizationId, orgId) : undefined))
      .returning();
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
      .select({
        session: activationSessions,
        nodeId: devices.nodeId,
        deviceNickname: devices.nickname,
        ownerEmail: users.email,
        ownerName: users.fullName,
        networkId: portalNetworks.id,
        networkName: portalNetworks.name,
      })
      .from(activationSessions)
      .innerJoin(deviceMemberships, eq(deviceMemberships.id, activationSessions.membershipId))
      .innerJoin(devices, eq(devices.id, deviceMemberships.deviceId))
      .innerJoin(users, eq(users.id, activationSessions.userId))
      .innerJoin(portalNetworks, eq(portalNetworks.id, deviceMemberships.portalNetworkId))
      .where(and(eq(activationSessions.organizationId, orgId), isNull(activationSessions.endedAt), gt(activationSessions.expiresAt, now)))
      .orderBy(asc(activationSessions.expiresAt));
  },

  // --- kill switch ------------------------------------------------------------------------------
  async insertKillSwitch(db: Executor, v: typeof killSwitchEvents.$inferInsert): Promise<KillSwitchRow> {
    const [row] = await db.insert(killSwitchEvents).values(v).returning();
    return row!;
  },

  killSwitch: async (db: Executor, id: string): Promise<KillSwitchRow | undefined> => (await db.select().from(killSwitchEvents).where(eq(killSwitchEvents.id, id)).for("update"))[0],

  async updateKillSwitch(db: Executor, id: string, v: Partial<typeof killSwitchEvents.$inferInsert>): Promise<KillSwitchRow> {
    const [row] = await db.update(killSwitchEvents).set(v).where(eq(killSwitchEvents.id, id)).returning();
    return row!;
  },

  /** The history an organization's admins see: its own events and global ones about its members. */
  async killSwitchHistory(db: Executor, orgId: string) {
    return db
      .select({ event: killSwitchEvents, targetEmail: users.email, targetName: users.fullName })
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

  isSuperadmin: async (db: Executor, userId: string | null): Promise<boolean> =>
    userId !== null && (await db.select({ s: users.isSuperadmin }).from(users).where(eq(users.id, userId)))[0]?.s === true,

  approvalById: async (db: Executor, id: string): Promise<ApprovalRow | undefined> => (await db.select().from(networkApprovals).where(eq(networkApprovals.id, id)))[0],

  /** Networks of every organization on which this person has live memberships (a global kill switch). */
  async networkIdsOfPerson(db: Executor, userId: string): Promise<string[]> {
    const rows = await db.selectDistinct({ id: deviceMemberships.portalNetworkId }).from(deviceMemberships).where(and(eq(deviceMemberships.userId, userId), live(deviceMemberships)));
    const approvals = await db.selectDistinct({ id: networkApprovals.portalNetworkId }).from(networkApprovals).where(eq(networkApprovals.userId, userId));
    return [...new Set([...rows, ...approvals].map((r) => r.id))];
  },

  // --- leases -----------------------------------------------------------------------------------
  /** Takes the named lease until `until` if it is free or lapsed: true for exactly one caller per lapse. */
  async claimLease(db: Executor, name: string, holder: string, now: Date, until: Date): Promise<boolean> {
    await db.insert(jobLeases).values({ name, holder, expiresAt: new Date(0) }).onConflictDoNothing();
    const rows = await db
      .update(jobLeases)
      .set({ holder, expiresAt: until, lastRunAt: now })
      .where(and(eq(jobLeases.name, name), lte(jobLeases.expiresAt, now)))
      .returning({ name: jobLeases.name });
    return rows.length === 1;
  },
};
