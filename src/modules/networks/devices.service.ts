import { uniqueOr } from "../../infra/db-errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/index.js";
import { userAccounts } from "../users/index.js";
import { atController } from "./controller-config.service.js";
import { requireNetwork } from "./network-access.js";
import { NetworkErrors } from "./networks.errors.js";
import { activationSessionsRepository } from "./activation-sessions.repository.js";
import { approvalsRepository } from "./approvals.repository.js";
import { deviceMembershipsRepository } from "./device-memberships.repository.js";
import { devicesRepository } from "./devices.repository.js";
import { killSwitchRepository } from "./kill-switch.repository.js";
import type { ApprovalRow, DeviceRow, MembershipState } from "./networks.repository.js";
import { portalNetworksRepository } from "./portal-networks.repository.js";
import { createDeviceSchema, importMembersSchema, updateDeviceSchema, type CreateDeviceInput, type UpdateDeviceInput, type ImportMembersInput } from "./networks.schemas.js";
import { toDeviceView, toMembershipView, type DeviceView, type MembershipView } from "./networks.views.js";
import type { NetworksCore } from "./networks.core.js";
import { can, getActiveMembership, type OrgAccess, requireOrgAccess } from "../access/index.js";

/** Where a device's membership starts, from its owner's standing on the network. */
export function initialState(approval: ApprovalRow | undefined): MembershipState {
  if (!approval) return "pending_request";
  return approval.state === "approved" ? "approved_inactive" : approval.state === "pending" ? "pending_manager_approval" : "suspended";
}

/** People's devices (ZeroTier node ids) in an organization; each person manages their own. */
export class DevicesService {
  constructor(private readonly deps: NetworksCore) {}

  async list(ctx: RequestContext, orgId: string): Promise<DeviceView[]> {
    const { orgId: id, actor } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const now = this.deps.clock.now();
    const rows = await devicesRepository.devicesOfUser(this.deps.db, id, actor.userId);
    const memberships = await deviceMembershipsRepository.enrichedMemberships(this.deps.db, { orgId: id, userId: actor.userId }, now);
    return rows.map((d) => toDeviceView(d, memberships.filter((m) => m.membership.deviceId === d.id && m.sessionId).length));
  }

  /** Registers a device; it joins at once every network its owner is approved for. */
  async create(ctx: RequestContext, orgId: string, input: CreateDeviceInput): Promise<{ device: DeviceView; membershipsCreated: number }> {
    const { orgId: id, actor } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const data = parseInput(createDeviceSchema, input);
    // The same node registered twice at once: the unique index decides.
    return uniqueOr(
      () =>
        this.deps.db.transaction(async (tx) => {
          const now = this.deps.clock.now();
          const device = await devicesRepository.insertDevice(tx, {
            organizationId: id,
            userId: actor.userId,
            nodeId: data.nodeId,
            nickname: data.nickname,
            hostname: data.hostname,
            assetTag: data.assetTag,
            serialNumber: data.serialNumber,
            createdAt: now,
            updatedAt: now,
          });
          const approvals = await approvalsRepository.approvedNetworksOfUser(tx, id, actor.userId);
          for (const a of approvals) {
            await deviceMembershipsRepository.insertMembership(tx, { organizationId: id, userId: actor.userId, deviceId: device.id, portalNetworkId: a.portalNetworkId, approvalId: a.id, state: "approved_inactive", createdAt: now, updatedAt: now });
          }
          await this.deps.audit.record(tx, ctx, AuditAction.deviceRegistered, { organizationId: id, resourceType: "device", resourceId: device.id, metadata: { node_id: device.nodeId, nickname: device.nickname } });
          return { device: toDeviceView(device), membershipsCreated: approvals.length };
        }),
      { devices_org_node_live_uq: NetworkErrors.deviceExists },
    );
  }

  async get(ctx: RequestContext, orgId: string, deviceId: string): Promise<DeviceView & { memberships: MembershipView[] }> {
    const { access, device } = await this.ownDevice(ctx, orgId, deviceId, { adminMay: true });
    const now = this.deps.clock.now();
    const memberships = (await deviceMembershipsRepository.enrichedMemberships(this.deps.db, { orgId: access.orgId, userId: device.userId }, now)).filter((m) => m.membership.deviceId === device.id);
    return { ...toDeviceView(device, memberships.filter((m) => m.sessionId).length), memberships: memberships.map((m) => toMembershipView(m, now)) };
  }

  async update(ctx: RequestContext, orgId: string, deviceId: string, input: UpdateDeviceInput): Promise<DeviceView> {
    const { access, device } = await this.ownDevice(ctx, orgId, deviceId, { adminMay: false });
    const data = parseInput(updateDeviceSchema, input);
    const updated = await this.deps.db.transaction(async (tx) => {
      await killSwitchRepository.lockPerson(tx, device.userId);
      if (!(await devicesRepository.lockDevice(tx, access.orgId, device.id))) throw NetworkErrors.deviceNotFound();
      const row = await devicesRepository.updateDevice(tx, device.id, { ...data, updatedAt: this.deps.clock.now() });
      await this.deps.audit.record(tx, ctx, AuditAction.deviceUpdated, { organizationId: access.orgId, resourceType: "device", resourceId: device.id, metadata: { fields: Object.keys(data) } });
      return row;
    });
    // An inactive device holds no access.
    if (data.status === "inactive") await this.endAccess(ctx, access.orgId, device, "logout", { remove: false });
    return toDeviceView(updated);
  }

  /** Deletes a device (its owner, or an admin): its activations end and it comes off every network. */
  async remove(ctx: RequestContext, orgId: string, deviceId: string): Promise<void> {
    const { access, device } = await this.ownDevice(ctx, orgId, deviceId, { adminMay: true });
    await this.endAccess(ctx, access.orgId, device, device.userId === access.actor.userId ? "logout" : "admin_action", { remove: true });
  }

  /** Puts a device on a network; where it starts depends on its owner's standing there. */
  async joinNetwork(ctx: RequestContext, orgId: string, deviceId: string, networkId: string): Promise<MembershipView> {
    const { access, device } = await this.ownDevice(ctx, orgId, deviceId, { adminMay: false });
    const { network: asked } = await requireNetwork(this.deps.db, ctx, access.orgId, networkId);
    if (!asked.isActive) throw NetworkErrors.networkNotFound();
    // The answer is read in the transaction, under its locks: a removal of the network or the device
    // waits for it, so the join is answered as it committed.
    const joined = await this.deps.db.transaction(async (tx) => {
      // The network (key share: a removal that committed meanwhile is seen here, not after the
      // insert), the owner, then the device: the order of approvals (network, person) and of
      // offboarding and device removal (person, device). A removal or another join of the same
      // device waits, and what is read below is as of after them.
      const network = await portalNetworksRepository.lockNetwork(tx, access.orgId, asked.id, "key share");
      if (!network?.isActive) throw NetworkErrors.networkNotFound();
      await killSwitchRepository.lockPerson(tx, device.userId);
      if (!(await devicesRepository.lockDevice(tx, access.orgId, device.id))) throw NetworkErrors.deviceNotFound();
      const now = this.deps.clock.now();
      const viewOf = async (id: string) => {
        const [view] = await deviceMembershipsRepository.enrichedMemberships(tx, { orgId: access.orgId, ids: [id] }, now);
        if (!view) throw NetworkErrors.deviceNotFound();
        return view;
      };
      const existing = await deviceMembershipsRepository.membershipOf(tx, device.id, network.id);
      if (existing) return viewOf(existing.id);
      if (await killSwitchRepository.killSwitchInForce(tx, device.userId, network)) throw NetworkErrors.suspended();
      let approval = await approvalsRepository.liveApproval(tx, device.userId, network.id);
      // Open networks approve whoever asks.
      if (!approval && network.requestMode === "open") {
        approval = await approvalsRepository.insertApproval(tx, { organizationId: access.orgId, userId: device.userId, portalNetworkId: network.id, grantType: "requested", state: "approved", decidedAt: now, createdAt: now, updatedAt: now });
        await this.deps.audit.record(tx, ctx, AuditAction.approvalApproved, { organizationId: access.orgId, userId: device.userId, resourceType: "network_approval", resourceId: approval.id, metadata: { network_id: network.id, automatic: true } });
      }
      const m = await deviceMembershipsRepository.insertMembership(tx, { organizationId: access.orgId, userId: device.userId, deviceId: device.id, portalNetworkId: network.id, approvalId: approval?.id, state: initialState(approval), createdAt: now, updatedAt: now });
      await this.deps.audit.record(tx, ctx, AuditAction.membershipJoined, { organizationId: access.orgId, resourceType: "device_membership", resourceId: m.id, metadata: { device_id: device.id, network_id: network.id, state: m.state } });
      return viewOf(m.id);
    });
    return toMembershipView(joined, this.deps.clock.now());
  }

  /**
   * Imports a network's existing controller members as devices of the people named for them. A
   * member authorized at the controller today keeps access for one default activation lifetime
   * (so the import does not cut anyone off), after which Keyward's rules apply.
   */
  async importMembers(ctx: RequestContext, orgId: string, input: ImportMembersInput): Promise<{ imported: number; skipped: Array<{ nodeId: string; reason: string }> }> {
    const { orgId: id, actor } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.manage");
    const data = parseInput(importMembersSchema, input);
    const { network } = await requireNetwork(this.deps.db, ctx, id, data.portalNetworkId);
    const client = await this.deps.controllers.requireClient(this.deps.db, id);
    const remote = new Map((await atController(() => client.listMembers(network.zerotierNetworkId))).map((m) => [m.nodeId, m]));
    const skipped: Array<{ nodeId: string; reason: string }> = [];
    let imported = 0;
    await this.deps.db.transaction(async (tx) => {
      const now = this.deps.clock.now();
      // The network, then everyone named, in id order (as one join locks network then person):
      // two imports, or an import and a join, queue instead of deadlocking.
      if (!(await portalNetworksRepository.lockNetwork(tx, id, network.id, "key share"))) throw NetworkErrors.networkNotFound();
      const named: string[] = [];
      for (const a of data.assignments) {
        const user = await userAccounts.findByEmail(tx, normalizeEmail(a.email));
        if (user) named.push(user.id);
      }
      await killSwitchRepository.lockPeople(tx, [...new Set(named)]);
      for (const a of data.assignments) {
        const member = remote.get(a.nodeId);
        if (!member) {
          skipped.push({ nodeId: a.nodeId, reason: "not a member at the controller" });
          continue;
        }
        const user = await userAccounts.findByEmail(tx, normalizeEmail(a.email));
        if (!user || !(await getActiveMembership(tx, user.id, id))) {
          skipped.push({ nodeId: a.nodeId, reason: "no member of the organization has this email" });
          continue;
        }
        // Import grants standing; a person cut off by a kill switch gets none until it is lifted.
        await killSwitchRepository.lockPerson(tx, user.id);
        if (await killSwitchRepository.killSwitchInForce(tx, user.id, network)) {
          skipped.push({ nodeId: a.nodeId, reason: "access suspended by a kill switch" });
          continue;
        }
        let device = await devicesRepository.deviceByNode(tx, id, a.nodeId);
        if (device && device.userId !== user.id) {
          skipped.push({ nodeId: a.nodeId, reason: "registered to someone else" });
          continue;
        }
        device ??= await devicesRepository.insertDevice(tx, { organizationId: id, userId: user.id, nodeId: a.nodeId, nickname: a.nickname ?? member.name, createdAt: now, updatedAt: now });
        let approval = await approvalsRepository.liveApproval(tx, user.id, network.id);
        approval ??= await approvalsRepository.insertApproval(tx, { organizationId: id, userId: user.id, portalNetworkId: network.id, grantType: "assigned", state: "approved", grantedByUserId: actor.userId, justification: "Imported from the controller", decidedAt: now, createdAt: now, updatedAt: now });
        if (await deviceMembershipsRepository.membershipOf(tx, device.id, network.id)) {
          skipped.push({ nodeId: a.nodeId, reason: "already imported" });
          continue;
        }
        const keep = member.authorized && approval.state === "approved";
        const m = await deviceMembershipsRepository.insertMembership(tx, {
          organizationId: id,
          userId: user.id,
          deviceId: device.id,
          portalNetworkId: network.id,
          approvalId: approval.id,
          state: keep ? "active_authorized" : initialState(approval),
          joinSeen: member.lastSeen !== null,
          currentlyAuthorized: member.authorized,
          createdAt: now,
          updatedAt: now,
        });
        if (keep) {
          await activationSessionsRepository.insertSession(tx, {
            organizationId: id,
            membershipId: m.id,
            userId: user.id,
            authenticatedAt: now,
            expiresAt: new Date(now.getTime() + network.defaultActivationLifetimeMinutes * 60_000),
            createdBy: actor.userId,
          });
        }
        imported++;
      }
      await this.deps.audit.record(tx, ctx, AuditAction.devicesImported, { organizationId: id, resourceType: "portal_network", resourceId: network.id, metadata: { imported, skipped: skipped.length } });
    });
    return { imported, skipped };
  }

  private async ownDevice(ctx: RequestContext, orgId: string, deviceId: string, opts: { adminMay: boolean }): Promise<{ access: OrgAccess; device: DeviceRow }> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const device = await devicesRepository.device(this.deps.db, access.orgId, parseId(deviceId, NetworkErrors.deviceNotFound));
    const mayAdmin = opts.adminMay && can(access.membership.role, "networks.manage");
    // Someone else's device does not exist for a plain member.
    if (!device || (device.userId !== access.actor.userId && !mayAdmin)) throw NetworkErrors.deviceNotFound();
    return { access, device };
  }

  private async endAccess(ctx: RequestContext, orgId: string, device: DeviceRow, reason: "logout" | "admin_action", opts: { remove: boolean }): Promise<void> {
    const ids = await this.deps.db.transaction(async (tx) => {
      const now = this.deps.clock.now();
      // The owner, then the device (as joins and offboarding lock): joins of this device queue
      // behind its removal; a second removal finds it gone.
      await killSwitchRepository.lockPerson(tx, device.userId);
      if (!(await devicesRepository.lockDevice(tx, orgId, device.id))) throw NetworkErrors.deviceNotFound();
      const memberships = await deviceMembershipsRepository.membershipsOfUser(tx, device.userId, { orgId, deviceId: device.id });
      const ids = memberships.map((m) => m.id);
      await activationSessionsRepository.endSessions(tx, ids, reason, now);
      if (opts.remove) {
        await deviceMembershipsRepository.updateMemberships(tx, ids, { state: "revoked", deletedAt: now, updatedAt: now });
        await devicesRepository.updateDevice(tx, device.id, { deletedAt: now, updatedAt: now });
        await this.deps.audit.record(tx, ctx, AuditAction.deviceDeleted, { organizationId: orgId, userId: device.userId, resourceType: "device", resourceId: device.id, metadata: { node_id: device.nodeId } });
      } else {
        const active = memberships.filter((m) => m.state === "active_authorized").map((m) => m.id);
        await deviceMembershipsRepository.updateMemberships(tx, active, { state: "approved_inactive", updatedAt: now });
      }
      return ids;
    });
    await this.deps.sync.apply(ids);
  }
}

