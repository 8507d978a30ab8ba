import { and, asc, desc, eq, inArray } from "drizzle-orm";
import { devices, networkApprovals, networkManagers, portalNetworks, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";
import { live } from "../../infra/soft-delete.js";
import { approvalColumns, type ApprovalRow } from "./networks.repository.js";

/** Approval states that still stand (a person holds at most one per network). */
const LIVE_APPROVAL = ["pending", "approved", "suspended"] as const;

/** A person's standing on a network (approvals), and its end when they leave. */
export const approvalsRepository = {
  approval: async (db: Executor, orgId: string, id: string): Promise<ApprovalRow | undefined> =>
    (await db.select(approvalColumns).from(networkApprovals).where(idInOrg(networkApprovals, orgId, id)).for("update"))[0],

  approvalById: async (db: Executor, id: string): Promise<ApprovalRow | undefined> => (await db.select(approvalColumns).from(networkApprovals).where(eq(networkApprovals.id, id)))[0],

  liveApproval: async (db: Executor, userId: string, networkId: string): Promise<ApprovalRow | undefined> =>
    (
      await db
        .select(approvalColumns)
        .from(networkApprovals)
        .where(and(eq(networkApprovals.userId, userId), eq(networkApprovals.portalNetworkId, networkId), inArray(networkApprovals.state, [...LIVE_APPROVAL])))
    )[0],

  approvedNetworksOfUser: async (db: Executor, orgId: string, userId: string): Promise<ApprovalRow[]> =>
    db.select(approvalColumns).from(networkApprovals).where(and(eq(networkApprovals.organizationId, orgId), eq(networkApprovals.userId, userId), eq(networkApprovals.state, "approved"))),

  async insertApproval(db: Executor, v: typeof networkApprovals.$inferInsert): Promise<ApprovalRow> {
    const [row] = await db.insert(networkApprovals).values(v).returning(approvalColumns);
    return row!;
  },

  async updateApproval(db: Executor, id: string, v: Partial<typeof networkApprovals.$inferInsert>): Promise<ApprovalRow> {
    const [row] = await db.update(networkApprovals).set(v).where(eq(networkApprovals.id, id)).returning(approvalColumns);
    return row!;
  },

  approvalsOfUser: async (db: Executor, orgId: string, userId: string): Promise<ApprovalRow[]> =>
    db.select(approvalColumns).from(networkApprovals).where(and(eq(networkApprovals.organizationId, orgId), eq(networkApprovals.userId, userId))).orderBy(desc(networkApprovals.createdAt)),

  async pendingApprovals(db: Executor, orgId: string, networkIds: string[] | null) {
    if (networkIds && networkIds.length === 0) return [];
    return db
      .select({ approval: approvalColumns, email: users.email, fullName: users.fullName, networkName: portalNetworks.name })
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
};
