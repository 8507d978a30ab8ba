import { and, asc, eq, gt, inArray, isNull, or, sql } from "drizzle-orm";
import { activationSessions, deviceMemberships, networkApprovals, networkManagers, orgMemberships, portalNetworks, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";
import { live } from "../../infra/soft-delete.js";
import { portalNetworkColumns, type PortalNetworkRow } from "./networks.repository.js";

/** Portal networks and their named managers. */
export const portalNetworksRepository = {
  /** Locks the live networks of these organizations FOR UPDATE, in id order (an organization's deletion). */
  async lockNetworksOf(db: Executor, orgIds: string[]): Promise<void> {
    if (orgIds.length === 0) return;
    await db.select({ id: portalNetworks.id }).from(portalNetworks).where(and(inArray(portalNetworks.organizationId, orgIds), live(portalNetworks))).orderBy(portalNetworks.id).for("update");
  },

  async listNetworks(db: Executor, orgId: string, includeInactive: boolean): Promise<PortalNetworkRow[]> {
    return db
      .select(portalNetworkColumns)
      .from(portalNetworks)
      .where(and(eq(portalNetworks.organizationId, orgId), live(portalNetworks), includeInactive ? undefined : eq(portalNetworks.isActive, true)))
      .orderBy(asc(portalNetworks.name));
  },

  network: async (db: Executor, orgId: string, id: string): Promise<PortalNetworkRow | undefined> =>
    (await db.select(portalNetworkColumns).from(portalNetworks).where(and(idInOrg(portalNetworks, orgId, id), live(portalNetworks))))[0],

  networkAnyOrg: async (db: Executor, id: string): Promise<PortalNetworkRow | undefined> => (await db.select(portalNetworkColumns).from(portalNetworks).where(eq(portalNetworks.id, id)))[0],

  /** Locks the network row: approvals and activations on it serialize with its deletion. */
  /** The live network, locked: FOR UPDATE to change or remove it, FOR KEY SHARE to add to it (waits for a removal, then finds it gone). */
  lockNetwork: async (db: Executor, orgId: string, id: string, mode: "update" | "key share" = "update"): Promise<PortalNetworkRow | undefined> =>
    (await db.select(portalNetworkColumns).from(portalNetworks).where(and(idInOrg(portalNetworks, orgId, id), live(portalNetworks))).for(mode))[0],

  async insertNetwork(db: Executor, v: typeof portalNetworks.$inferInsert): Promise<PortalNetworkRow> {
    const [row] = await db.insert(portalNetworks).values(v).returning(portalNetworkColumns);
    return row!;
  },

  async updateNetwork(db: Executor, id: string, v: Partial<typeof portalNetworks.$inferInsert>): Promise<PortalNetworkRow> {
    const [row] = await db.update(portalNetworks).set(v).where(eq(portalNetworks.id, id)).returning(portalNetworkColumns);
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

  /**
   * Owners and admins of the organization, and the network's named managers: who is told about a
   * request. By the stored role on purpose: a temporary admin (a role grant) is not told.
   */
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
      .select(portalNetworkColumns)
      .from(portalNetworks)
      .where(and(orgId ? eq(portalNetworks.organizationId, orgId) : undefined, or(isNull(portalNetworks.deletedAt), isNull(portalNetworks.cleanedUpAt))))
      .orderBy(asc(portalNetworks.organizationId), asc(portalNetworks.id)),
};
