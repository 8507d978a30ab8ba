import type { Executor } from "../../infra/db.js";
import { uniqueOr } from "../../infra/db-errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/index.js";
import type { EmailService } from "../email/index.js";
import { userAccounts } from "../users/index.js";
import { initialState } from "./devices.service.js";
import { isNetworkManager, requireNetwork, requireNetworkManager } from "./network-access.js";
import { NetworkErrors } from "./networks.errors.js";
import { activationSessionsRepository } from "./activation-sessions.repository.js";
import { approvalsRepository } from "./approvals.repository.js";
import { deviceMembershipsRepository } from "./device-memberships.repository.js";
import { devicesRepository } from "./devices.repository.js";
import { killSwitchRepository } from "./kill-switch.repository.js";
import { portalNetworksRepository } from "./portal-networks.repository.js";
import type { ApprovalRow, PortalNetworkRow } from "./networks.repository.js";
import { assignApprovalSchema, decideSchema, pendingQuerySchema, requestApprovalSchema, type RequestApprovalInput, type AssignApprovalInput, type DecideInput, type PendingQueryInput } from "./networks.schemas.js";
import { toApprovalView, type ApprovalView } from "./networks.views.js";
import type { NetworksCore } from "./networks.core.js";
import { can, getActiveMembership, requireOrgAccess } from "../access/index.js";

type Decision = "approve" | "reject" | "revoke";

/** What the audit record says of a decision on one's own request: only a superadmin makes one, and it shows. */
const ownDecision = (own: boolean) => (own ? { own_request: true, decided_as: "superadmin" } : {});

/**
 * Who may be on which network: people ask (with a reason), managers decide, admins assign.
 * Approval never authorizes anything by itself: it lets the person activate for a bounded time.
 * Every transition is audited with the acting user; the people who must act are emailed.
 */
export class ApprovalsService {
  constructor(private readonly deps: Omit<NetworksCore, "controllers"> & { email: EmailService; config: { appUrl: string } }) {}

  /** A member asks for a network (optionally naming the device to put on it). */
  async request(ctx: RequestContext, orgId: string, input: RequestApprovalInput): Promise<ApprovalView> {
    // Tenancy first: an outsider learns nothing, not even which fields are wrong.
    await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const data = parseInput(requestApprovalSchema, input);
    const access = await requireNetwork(this.deps.db, ctx, orgId, data.portalNetworkId);
    const { network, actor } = access;
    if (!network.isActive) throw NetworkErrors.networkNotFound();
    if (network.requestMode === "invite_only") throw NetworkErrors.inviteOnly();
    const device = data.deviceId ? await devicesRepository.device(this.deps.db, access.orgId, parseId(data.deviceId, NetworkErrors.deviceNotFound)) : undefined;
    if (data.deviceId && (!device || device.userId !== actor.userId)) throw NetworkErrors.deviceNotFound();
    const open = network.requestMode === "open";
    const approval = await this.guardUnique(() =>
      this.deps.db.transaction(async (tx) => {
        // Network, person, device: the order of joins, so a join of the same person queues.
        await this.lockStanding(tx, access.orgId, network.id, actor.userId);
        if (device && !(await devicesRepository.lockDevice(tx, access.orgId, device.id))) throw NetworkErrors.deviceNotFound();
        const now = this.deps.clock.now();
        if (await killSwitchRepository.killSwitchInForce(tx, actor.userId, network)) throw NetworkErrors.suspended();
        const created = await approvalsRepository.insertApproval(tx, {
          organizationId: access.orgId,
          userId: actor.userId,
          portalNetworkId: network.id,
          grantType: "requested",
          state: open ? "approved" : "pending",
          justification: data.justification,
          decidedAt: open ? now : null,
          createdAt: now,
          updatedAt: now,
        });
        await this.deps.audit.record(tx, ctx, open ? AuditAction.approvalApproved : AuditAction.approvalRequested, {
          organizationId: access.orgId,
          resourceType: "network_approval",
          resourceId: created.id,
          metadata: { network_id: network.id, automatic: open || undefined },
        });
        await this.attachDevices(tx, created, device ? [device.id] : null, now);
        if (!open) {
          const requester = await userAccounts.find(tx, actor.userId);
          for (const m of await portalNetworksRepository.managerContacts(tx, access.orgId, network.id)) {
            if (m.email === actor.email) continue;
            await this.deps.email.enqueue(tx, "network-access-request", m.email, {
              managerName: m.fullName ?? m.email,
              requesterName: requester?.fullName ?? actor.email,
              requesterEmail: actor.email,
              networkName: network.name,
              organizationName: access.membership.organizationName,
              justification: data.justification ?? "(none given)",
              reviewUrl: `${this.deps.config.appUrl}/orgs/${encodeURIComponent(access.membership.organizationSlug)}/networks/requests`,
            });
          }
        }
        return created;
      }),
    );
    return toApprovalView(approval);
  }

  async listMine(ctx: RequestContext, orgId: string): Promise<ApprovalView[]> {
    const { orgId: id, actor } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    return (await approvalsRepository.approvalsOfUser(this.deps.db, id, actor.userId)).map((a) => toApprovalView(a));
  }

  /** Pending requests a manager can decide: every network for admins, their own networks for named managers. */
  async pending(ctx: RequestContext, orgId: string, query: PendingQueryInput = {}): Promise<ApprovalView[]> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const q = parseInput(pendingQuerySchema, query);
    let networkIds: string[] | null = null;
    if (q.networkId) {
      const { network } = await requireNetworkManager(this.deps.db, ctx, access.orgId, q.networkId);
      networkIds = [network.id];
    } else if (!can(access.membership.role, "networks.manage")) {
      networkIds = await portalNetworksRepository.managedNetworkIds(this.deps.db, access.orgId, access.actor.userId);
    }
    return (await approvalsRepository.pendingApprovals(this.deps.db, access.orgId, networkIds)).map((r) => toApprovalView(r.approval, { email: r.email, fullName: r.fullName, networkName: r.networkName }));
  }

  approve(ctx: RequestContext, orgId: string, approvalId: string, input: DecideInput = {}) {
    return this.decide(ctx, orgId, approvalId, "approve", input);
  }

  reject(ctx: RequestContext, orgId: string, approvalId: string, input: DecideInput = {}) {
    return this.decide(ctx, orgId, approvalId, "reject", input);
  }

  /** Revoking ends the person's activations on the network and takes their devices off it. */
  revoke(ctx: RequestContext, orgId: string, approvalId: string, input: DecideInput = {}) {
    return this.decide(ctx, orgId, approvalId, "revoke", input);
  }

  /** A manager grants a member access directly (the only way onto invite-only networks). */
  async assign(ctx: RequestContext, orgId: string, input: AssignApprovalInput): Promise<ApprovalView> {
    await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const data = parseInput(assignApprovalSchema, input);
    const access = await requireNetworkManager(this.deps.db, ctx, orgId, data.portalNetworkId);
    const target = await getActiveMembership(this.deps.db, data.targetUserId, access.orgId);
    // Not a member: as unknown as any other id.
    if (!target) throw NetworkErrors.approvalNotFound();
    // Nobody grants themselves access (rule 20): another manager does, and the trail shows two
    // people. A superadmin (an operator, above every organization) may, and the record says so.
    const own = data.targetUserId === access.actor.userId;
    if (own && !access.actor.isSuperadmin) throw NetworkErrors.ownRequest();
    const approval = await this.guardUnique(() =>
      this.deps.db.transaction(async (tx) => {
        await this.lockStanding(tx, access.orgId, access.network.id, data.targetUserId);
        const now = this.deps.clock.now();
        if (await killSwitchRepository.killSwitchInForce(tx, data.targetUserId, access.network)) throw NetworkErrors.suspended();
        const created = await approvalsRepository.insertApproval(tx, {
          organizationId: access.orgId,
          userId: data.targetUserId,
          portalNetworkId: access.network.id,
          grantType: "assigned",
          state: "approved",
          justification: data.justification,
          grantedByUserId: access.actor.userId,
          decidedAt: now,
          createdAt: now,
          updatedAt: now,
        });
        await this.deps.audit.record(tx, ctx, AuditAction.approvalAssigned, { organizationId: access.orgId, userId: data.targetUserId, resourceType: "network_approval", resourceId: created.id, metadata: { network_id: access.network.id, ...ownDecision(own) } });
        await this.attachDevices(tx, created, null, now);
        await this.notify(tx, created, access.network, access.membership.organizationName, "granted", data.justification);
        return created;
      }),
    );
    return toApprovalView(approval);
  }

  private async decide(ctx: RequestContext, orgId: string, approvalId: string, action: Decision, input: DecideInput): Promise<ApprovalView> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const { reason } = parseInput(decideSchema, input ?? {});
    const id = parseId(approvalId, NetworkErrors.approvalNotFound);
    const { approval, touched } = await this.deps.db.transaction(async (tx) => {
      const current = await approvalsRepository.approval(tx, access.orgId, id);
      if (!current) throw NetworkErrors.approvalNotFound();
      const network = await portalNetworksRepository.lockNetwork(tx, access.orgId, current.portalNetworkId);
      if (!network) throw NetworkErrors.approvalNotFound();
      if (!(await isNetworkManager(tx, access, network.id))) {
        // A plain member learns nothing about others' requests.
        if (current.userId !== access.actor.userId) throw NetworkErrors.approvalNotFound();
        throw NetworkErrors.notManager();
      }
      // Nobody decides their own request (rule 20), whatever their role in the organization; a
      // superadmin may, and the record says so. Giving up one's own access (revoke) decides nothing for oneself.
      const own = action !== "revoke" && current.userId === access.actor.userId;
      if (own && !access.actor.isSuperadmin) throw NetworkErrors.ownRequest();
      const allowed: Record<Decision, ApprovalRow["state"][]> = { approve: ["pending"], reject: ["pending"], revoke: ["approved", "suspended"] };
      if (!allowed[action].includes(current.state)) throw NetworkErrors.invalidTransition(current.state, action);
      // The person, whatever the decision: the kill switch and offboarding lock the person before
      // the sessions, memberships and approvals a decision changes.
      await killSwitchRepository.lockPerson(tx, current.userId);
      // No standing is granted to someone a kill switch has cut off (its lift restores what it suspended).
      if (action === "approve" && (await killSwitchRepository.killSwitchInForce(tx, current.userId, network))) throw NetworkErrors.suspended();
      const now = this.deps.clock.now();
      const state = action === "approve" ? "approved" : action === "reject" ? "rejected" : "revoked";
      const updated = await approvalsRepository.updateApproval(tx, current.id, { state, grantedByUserId: access.actor.userId, decidedAt: now, decisionReason: reason, updatedAt: now });
      const memberships = await deviceMembershipsRepository.membershipsOfUser(tx, current.userId, { networkIds: [network.id] });
      const ids = memberships.map((m) => m.id);
      let ended: string[] = [];
      if (action === "approve") {
        const waiting = memberships.filter((m) => m.state === "pending_manager_approval" || m.state === "pending_request").map((m) => m.id);
        await deviceMembershipsRepository.updateMemberships(tx, waiting, { state: "approved_inactive", approvalId: current.id, updatedAt: now });
      } else {
        if (action === "revoke") ended = (await activationSessionsRepository.endSessions(tx, ids, "approval_revoked", now)).map((s) => s.membershipId);
        await deviceMembershipsRepository.updateMemberships(tx, ids, { state: action === "reject" ? "rejected" : "revoked", updatedAt: now });
      }
      const auditAction = action === "approve" ? AuditAction.approvalApproved : action === "reject" ? AuditAction.approvalRejected : AuditAction.approvalRevoked;
      await this.deps.audit.record(tx, ctx, auditAction, { organizationId: access.orgId, userId: current.userId, resourceType: "network_approval", resourceId: current.id, metadata: { network_id: network.id, reason, sessions_ended: ended.length, ...ownDecision(own) } });
      await this.notify(tx, updated, network, access.membership.organizationName, state, reason);
      return { approval: updated, touched: ids };
    });
    if (action === "revoke") await this.deps.sync.apply(touched);
    return toApprovalView(approval);
  }

  /** The person's devices on the network follow the approval (the named one, or every existing membership). */
  private async attachDevices(tx: Executor, approval: ApprovalRow, deviceIds: string[] | null, now: Date): Promise<void> {
    const existing = await deviceMembershipsRepository.membershipsOfUser(tx, approval.userId, { networkIds: [approval.portalNetworkId] });
    await deviceMembershipsRepository.updateMemberships(tx, existing.map((m) => m.id), { approvalId: approval.id, state: initialState(approval), updatedAt: now });
    for (const deviceId of deviceIds ?? []) {
      if (existing.some((m) => m.deviceId === deviceId)) continue;
      await deviceMembershipsRepository.insertMembership(tx, { organizationId: approval.organizationId, userId: approval.userId, deviceId, portalNetworkId: approval.portalNetworkId, approvalId: approval.id, state: initialState(approval), createdAt: now, updatedAt: now });
    }
  }

  private async notify(tx: Executor, approval: ApprovalRow, network: PortalNetworkRow, organizationName: string, decision: string, reason: string | null | undefined): Promise<void> {
    const person = await userAccounts.find(tx, approval.userId);
    if (!person) return;
    await this.deps.email.enqueue(tx, "network-access-decision", person.email, {
      name: person.fullName ?? person.email,
      networkName: network.name,
      organizationName,
      decision,
      reason: reason ? `Reason: ${reason}` : "",
      accessUrl: `${this.deps.config.appUrl}/account/networks`,
    });
  }

  /**
   * A new approval locks the network (key share: a removal that committed meanwhile is seen here)
   * and then the person, as joins do: a join of the same person on the same network queues
   * instead of inserting the same approval or membership at once.
   */
  private async lockStanding(tx: Executor, orgId: string, networkId: string, userId: string): Promise<void> {
    if (!(await portalNetworksRepository.lockNetwork(tx, orgId, networkId, "key share"))?.isActive) throw NetworkErrors.networkNotFound();
    await killSwitchRepository.lockPerson(tx, userId);
  }

  /** A second live approval for the same person and network (a concurrent request or grant) is refused. */
  private guardUnique<T>(run: () => Promise<T>): Promise<T> {
    return uniqueOr(run, { network_approvals_user_network_live_uq: NetworkErrors.approvalExists });
  }
}

