import { uniqueOr } from "../../infra/db-errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/index.js";
import { CommonErrors } from "../../lib/errors.js";
import { atController } from "./controller-config.service.js";
import type { ControllerNetwork } from "./controller/index.js";
import { requireNetwork, requireNetworkManager } from "./network-access.js";
import { NetworkErrors } from "./networks.errors.js";
import { activationSessionsRepository } from "./activation-sessions.repository.js";
import { approvalsRepository } from "./approvals.repository.js";
import { deviceMembershipsRepository } from "./device-memberships.repository.js";
import { portalNetworksRepository } from "./portal-networks.repository.js";
import type { PortalNetworkRow } from "./networks.repository.js";
import { createNetworkSchema, importNetworksSchema, listNetworksSchema, managersSchema, updateNetworkSchema, type CreateNetworkInput, type UpdateNetworkInput, type ImportNetworksInput, type ManagersInput, type ListNetworksInput } from "./networks.schemas.js";
import { toApprovalView, toMembershipView, toNetworkView, type ApprovalView, type MembershipView, type PortalNetworkView } from "./networks.views.js";
import type { NetworksCore } from "./networks.core.js";
import { getActiveMembership, requireOrgAccess, requireStoredRole } from "../access/index.js";

/** The organization's portal networks: ZeroTier networks whose access Keyward governs. */
export class PortalNetworksService {
  constructor(private readonly deps: NetworksCore) {}

  async list(ctx: RequestContext, orgId: string, query: ListNetworksInput = {}): Promise<PortalNetworkView[]> {
    const { orgId: id } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const q = parseInput(listNetworksSchema, query);
    const rows = await portalNetworksRepository.listNetworks(this.deps.db, id, q.includeInactive ?? false);
    return this.withCounts(rows);
  }

  async get(ctx: RequestContext, orgId: string, networkId: string): Promise<PortalNetworkView> {
    const { network } = await requireNetwork(this.deps.db, ctx, orgId, networkId);
    return (await this.withCounts([network]))[0]!;
  }

  /** The network must exist at the organization's controller. */
  async create(ctx: RequestContext, orgId: string, input: CreateNetworkInput): Promise<PortalNetworkView> {
    const { orgId: id, actor } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.manage");
    const data = parseInput(createNetworkSchema, input);
    const client = await this.deps.controllers.requireClient(this.deps.db, id);
    await atController(() => client.getNetwork(data.zerotierNetworkId));
    return this.insert(ctx, id, actor.userId, data);
  }

  async update(ctx: RequestContext, orgId: string, networkId: string, input: UpdateNetworkInput): Promise<PortalNetworkView> {
    const { orgId: id } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.manage");
    const { network } = await requireNetwork(this.deps.db, ctx, id, networkId);
    const data = parseInput(updateNetworkSchema, input);
    const def = data.defaultActivationLifetimeMinutes ?? network.defaultActivationLifetimeMinutes;
    const max = data.maxActivationLifetimeMinutes === undefined ? network.maxActivationLifetimeMinutes : data.maxActivationLifetimeMinutes;
    if (max != null && def > max) throw CommonErrors.badRequest(`default_activation_lifetime_minutes (${def}) must not exceed max_activation_lifetime_minutes (${max})`);
    const updated = await this.deps.db.transaction(async (tx) => {
      const row = await portalNetworksRepository.updateNetwork(tx, network.id, { ...data, updatedAt: this.deps.clock.now() });
      await this.deps.audit.record(tx, ctx, AuditAction.networkUpdated, { organizationId: id, resourceType: "portal_network", resourceId: network.id, metadata: { fields: Object.keys(data) } });
      return row;
    });
    // Switching a network off takes its devices off at once.
    if (data.isActive === false) await this.deps.sync.apply((await deviceMembershipsRepository.membershipsOfNetwork(this.deps.db, network.id)).map((m) => m.id));
    return (await this.withCounts([updated]))[0]!;
  }

  /**
   * Soft delete: every activation on it ends, approvals and memberships are revoked, and Keyward
   * takes off the controller what it authorized there (now, or at the next reconciliation).
   */
  async remove(ctx: RequestContext, orgId: string, networkId: string): Promise<void> {
    const { orgId: id } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.manage");
    const nid = parseId(networkId, NetworkErrors.networkNotFound);
    const memberships = await this.deps.db.transaction(async (tx) => {
      const network = await portalNetworksRepository.lockNetwork(tx, id, nid);
      if (!network) throw NetworkErrors.networkNotFound();
      const now = this.deps.clock.now();
      const rows = await deviceMembershipsRepository.membershipsOfNetwork(tx, network.id);
      const ids = rows.map((m) => m.id);
      await activationSessionsRepository.endSessions(tx, ids, "admin_action", now);
      await deviceMembershipsRepository.updateMemberships(tx, ids, { state: "revoked", updatedAt: now });
      await portalNetworksRepository.updateNetwork(tx, network.id, { deletedAt: now, isActive: false, updatedAt: now });
      await this.deps.audit.record(tx, ctx, AuditAction.networkDeleted, { organizationId: id, resourceType: "portal_network", resourceId: network.id, metadata: { name: network.name, memberships: ids.length } });
      return ids;
    });
    const result = await this.deps.sync.apply(memberships);
    if (result.pending === 0) await portalNetworksRepository.updateNetwork(this.deps.db, nid, { cleanedUpAt: this.deps.clock.now() });
  }

  /** The controller's networks the organization has not imported yet. */
  async available(ctx: RequestContext, orgId: string): Promise<ControllerNetwork[]> {
    const { orgId: id } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.manage");
    const client = await this.deps.controllers.requireClient(this.deps.db, id);
    const [all, imported] = await Promise.all([atController(() => client.listNetworks()), portalNetworksRepository.importedNetworkIds(this.deps.db, id)]);
    const known = new Set(imported);
    return all.filter((n) => !known.has(n.id));
  }

  /** Imports controller networks under their controller names, with the default settings. */
  async importNetworks(ctx: RequestContext, orgId: string, input: ImportNetworksInput): Promise<PortalNetworkView[]> {
    const { orgId: id, actor } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.manage");
    const { zerotierNetworkIds } = parseInput(importNetworksSchema, input);
    const client = await this.deps.controllers.requireClient(this.deps.db, id);
    const out: PortalNetworkView[] = [];
    for (const nwid of [...new Set(zerotierNetworkIds)]) {
      const remote = await atController(() => client.getNetwork(nwid));
      out.push(await this.insert(ctx, id, actor.userId, { name: remote.name || nwid, zerotierNetworkId: nwid, description: remote.description }));
    }
    return out;
  }

  /** Managers' view: every device membership of the network with the device's and owner's names. */
  async members(ctx: RequestContext, orgId: string, networkId: string): Promise<MembershipView[]> {
    const { orgId: id, network } = await requireNetworkManager(this.deps.db, ctx, orgId, networkId);
    const now = this.deps.clock.now();
    return (await deviceMembershipsRepository.enrichedMemberships(this.deps.db, { orgId: id, networkId: network.id }, now)).map((m) => toMembershipView(m, now));
  }

  async requests(ctx: RequestContext, orgId: string, networkId: string): Promise<ApprovalView[]> {
    const { orgId: id, network } = await requireNetworkManager(this.deps.db, ctx, orgId, networkId);
    return (await approvalsRepository.pendingApprovals(this.deps.db, id, [network.id])).map((r) => toApprovalView(r.approval, { email: r.email, fullName: r.fullName, networkName: r.networkName }));
  }

  async managers(ctx: RequestContext, orgId: string, networkId: string) {
    const { network } = await requireNetwork(this.deps.db, ctx, orgId, networkId);
    return portalNetworksRepository.managers(this.deps.db, network);
  }

  /** Names the network's managers (besides owners and admins); each must be a member of the organization. */
  async setManagers(ctx: RequestContext, orgId: string, networkId: string, input: ManagersInput) {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.manage");
    // A named manager decides the network's requests for good: not on a time-bounded role.
    requireStoredRole(access, "networks.manage", "name network managers");
    const { orgId: id, actor } = access;
    const { network } = await requireNetwork(this.deps.db, ctx, id, networkId);
    const { userIds } = parseInput(managersSchema, input);
    const unique = [...new Set(userIds)];
    for (const userId of unique) {
      if (!(await getActiveMembership(this.deps.db, userId, id))) throw CommonErrors.badRequest(`user_ids: ${userId} is not a member of this organization`);
    }
    await this.deps.db.transaction(async (tx) => {
      await portalNetworksRepository.replaceManagers(tx, network.id, unique, actor.userId, this.deps.clock.now());
      await this.deps.audit.record(tx, ctx, AuditAction.networkManagersSet, { organizationId: id, resourceType: "portal_network", resourceId: network.id, metadata: { managers: unique } });
    });
    return portalNetworksRepository.managers(this.deps.db, network);
  }

  private async insert(
    ctx: RequestContext,
    orgId: string,
    userId: string,
    data: { name: string; zerotierNetworkId: string; description?: string | null } & Partial<Pick<PortalNetworkRow, "environment" | "requestMode" | "defaultActivationLifetimeMinutes" | "maxActivationLifetimeMinutes">>,
  ): Promise<PortalNetworkView> {
    const row = await uniqueOr(
      () =>
        this.deps.db.transaction(async (tx) => {
          const now = this.deps.clock.now();
          const created = await portalNetworksRepository.insertNetwork(tx, { ...data, organizationId: orgId, ownerUserId: userId, createdAt: now, updatedAt: now });
          await this.deps.audit.record(tx, ctx, AuditAction.networkCreated, {
            organizationId: orgId,
            resourceType: "portal_network",
            resourceId: created.id,
            metadata: { name: created.name, zerotier_network_id: created.zerotierNetworkId, request_mode: created.requestMode },
          });
          return created;
        }),
      { portal_networks_org_ztid_live_uq: NetworkErrors.networkExists },
    );
    return toNetworkView(row);
  }

  private async withCounts(rows: PortalNetworkRow[]): Promise<PortalNetworkView[]> {
    const counts = await portalNetworksRepository.networkCounts(this.deps.db, rows.map((r) => r.id), this.deps.clock.now());
    return rows.map((r) => toNetworkView(r, counts.get(r.id)));
  }
}
