import type { Executor } from "../../infra/db.js";
import { CommonErrors } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/index.js";
import { NetworkErrors } from "./networks.errors.js";
import { activationSessionsRepository } from "./activation-sessions.repository.js";
import { approvalsRepository } from "./approvals.repository.js";
import { deviceMembershipsRepository } from "./device-memberships.repository.js";
import { devicesRepository } from "./devices.repository.js";
import { killSwitchRepository } from "./kill-switch.repository.js";
import { portalNetworksRepository } from "./portal-networks.repository.js";
import type { EndReason, MembershipRow } from "./networks.repository.js";
import { activationMinutes, killSwitchNetworks, requireOutranks } from "./network-access.js";
import { activateSchema, killSwitchSchema, type ActivateInput, type KillSwitchInput } from "./networks.schemas.js";
import { isActivatable, toKillSwitchView, toMembershipView, toSessionView, type KillSwitchView, type MembershipView, type SessionView } from "./networks.views.js";
import type { NetworksCore } from "./networks.core.js";
import { can, getActiveMembership, type OrgAccess, requireOrgAccess } from "../access/index.js";

export interface Activation {
  session: SessionView;
  membership: MembershipView;
  /** False when the controller could not be reached: the activation stands and the next reconciliation applies it. */
  controllerSynced: boolean;
}

/**
 * Time-boxed access: an approved person switches a device on for a bounded time; it is authorized
 * at the controller for exactly that window. The kill switch ends all of it for a person at once.
 * Every change is recorded first, then applied at the controller (ControllerSync), and the
 * reconciliation job finishes whatever the controller did not take.
 */
export class AccessService {
  constructor(private readonly deps: Omit<NetworksCore, "controllers">) {}

  /** The caller's device memberships, with names and time left. */
  async memberships(ctx: RequestContext, orgId: string): Promise<MembershipView[]> {
    const { orgId: id, actor } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    return this.views({ orgId: id, userId: actor.userId });
  }

  async activate(ctx: RequestContext, orgId: string, membershipId: string, input: ActivateInput = {}): Promise<Activation> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const { lifetimeMinutes } = parseInput(activateSchema, input ?? {});
    const id = parseId(membershipId, NetworkErrors.membershipNotFound);
    const session = await this.deps.db.transaction(async (tx) => {
      await killSwitchRepository.lockPerson(tx, access.actor.userId);
      const m = await deviceMembershipsRepository.membership(tx, access.orgId, id);
      if (!m || m.userId !== access.actor.userId) throw NetworkErrors.membershipNotFound();
      return this.start(tx, ctx, access, m, lifetimeMinutes, { strict: true });
    });
    const synced = await this.deps.sync.apply([id]);
    const now = this.deps.clock.now();
    return { session: toSessionView(session, now), membership: await this.view(access.orgId, id), controllerSynced: synced.pending === 0 };
  }

  /** Every activatable membership of the caller at once; lifetimes are capped per network rather than refused. */
  async activateAll(ctx: RequestContext, orgId: string, input: ActivateInput = {}): Promise<{ sessions: SessionView[]; controllerSynced: boolean }> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const { lifetimeMinutes } = parseInput(activateSchema, input ?? {});
    const sessions = await this.deps.db.transaction(async (tx) => {
      await killSwitchRepository.lockPerson(tx, access.actor.userId);
      const out = [];
      for (const m of await deviceMembershipsRepository.membershipsOfUser(tx, access.actor.userId, { orgId: access.orgId })) {
        if (!isActivatable(m.state)) continue;
        const network = await portalNetworksRepository.network(tx, access.orgId, m.portalNetworkId);
        if (!network?.isActive) continue;
        out.push(await this.start(tx, ctx, access, m, lifetimeMinutes, { strict: false }));
      }
      return out;
    });
    const synced = await this.deps.sync.apply(sessions.map((s) => s.membershipId));
    const now = this.deps.clock.now();
    return { sessions: sessions.map((s) => toSessionView(s, now)), controllerSynced: synced.pending === 0 };
  }

  async deactivate(ctx: RequestContext, orgId: string, membershipId: string): Promise<MembershipView> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const id = parseId(membershipId, NetworkErrors.membershipNotFound);
    await this.deps.db.transaction(async (tx) => {
      const m = await deviceMembershipsRepository.membership(tx, access.orgId, id);
      if (!m || m.userId !== access.actor.userId) throw NetworkErrors.membershipNotFound();
      // Only running access is switched off; any other state (pending, suspended, expired) stays as it is.
      if (m.state !== "active_authorized") return;
      await this.end(tx, ctx, access.orgId, [m], "logout", { state: m.joinSeen ? "joined_deauthorized" : "approved_inactive" });
    });
    await this.deps.sync.apply([id]);
    return this.view(access.orgId, id);
  }

  /** The caller takes one of their devices off a network. */
  async leave(ctx: RequestContext, orgId: string, membershipId: string): Promise<void> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    await this.removeMembership(ctx, access, membershipId, { self: true });
  }

  /** Admins: every membership of the organization, with people's and devices' names. */
  async adminMemberships(ctx: RequestContext, orgId: string): Promise<MembershipView[]> {
    const { orgId: id } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.manage");
    return this.views({ orgId: id });
  }

  async adminRemoveMembership(ctx: RequestContext, orgId: string, membershipId: string): Promise<void> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.manage");
    await this.removeMembership(ctx, access, membershipId, { self: false });
  }

  /** Running activations: the whole organization's for admins, one's own for everyone else. */
  async sessions(ctx: RequestContext, orgId: string) {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const now = this.deps.clock.now();
    const rows = await activationSessionsRepository.activeSessionsOfOrg(this.deps.db, access.orgId, now);
    const visible = can(access.membership.role, "networks.manage") ? rows : rows.filter((r) => r.session.userId === access.actor.userId);
    return visible.map((r) => ({
      ...toSessionView(r.session, now),
      nodeId: r.nodeId,
      deviceNickname: r.deviceNickname,
      ownerEmail: r.ownerEmail,
      ownerName: r.ownerName,
      portalNetworkId: r.networkId,
      networkName: r.networkName,
    }));
  }

  /** Ends one activation now: the owner (logout) or an admin (manual revoke). */
  async endSession(ctx: RequestContext, orgId: string, sessionId: string): Promise<void> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.use");
    const id = parseId(sessionId, NetworkErrors.sessionNotFound);
    const admin = can(access.membership.role, "networks.manage");
    const membershipId = await this.deps.db.transaction(async (tx) => {
      const found = await activationSessionsRepository.session(tx, access.orgId, id, { lock: false });
      if (!found || (found.userId !== access.actor.userId && !admin)) throw NetworkErrors.sessionNotFound();
      // The membership, then the session, as of now (the order of every path that ends or starts one).
      const m = await deviceMembershipsRepository.membership(tx, access.orgId, found.membershipId);
      if (!m) {
        if (found.endedAt) return null;
        throw NetworkErrors.sessionNotFound();
      }
      const s = (await activationSessionsRepository.session(tx, access.orgId, id, { lock: true }))!;
      // Ending what already ended is a no-op: it must not reach the renewal that replaced it.
      if (s.endedAt) return null;
      const state = m.state === "active_authorized" ? "approved_inactive" : undefined;
      await this.end(tx, ctx, access.orgId, [m], s.userId === access.actor.userId ? "logout" : "manual_revoke", { state });
      return m.id;
    });
    if (membershipId) await this.deps.sync.apply([membershipId]);
  }

  /**
   * The kill switch: every activation of the person in scope ends, every device of theirs there is
   * deauthorized at the controller now, and their approvals are suspended so nothing can be
   * re-activated until an admin lifts it. Organization scope: the org's admins (outranking the
   * person); global scope: superadmins only.
   */
  async killSwitch(ctx: RequestContext, orgId: string, input: KillSwitchInput): Promise<{ event: KillSwitchView; controllerSynced: boolean }> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.manage");
    const data = parseInput(killSwitchSchema, input);
    if (data.scope === "global" && !access.actor.isSuperadmin) throw CommonErrors.forbidden("Only superadmins can trigger a global kill switch");
    const target = await getActiveMembership(this.deps.db, data.targetUserId, access.orgId);
    if (!target && !(data.scope === "global" && access.actor.isSuperadmin)) throw CommonErrors.notFound("User");
    await requireOutranks(this.deps.db, access, data.targetUserId);
    const { event, touched } = await this.deps.db.transaction(async (tx) => {
      await killSwitchRepository.lockPerson(tx, data.targetUserId);
      const networkIds = await killSwitchNetworks(tx, access.orgId, data.scope, data.networkIds ?? [], data.targetUserId);
      const now = this.deps.clock.now();
      const memberships = await deviceMembershipsRepository.membershipsOfUser(tx, data.targetUserId, { networkIds });
      const ended = await activationSessionsRepository.endSessions(tx, memberships.map((m) => m.id), "kill_switch", now);
      await deviceMembershipsRepository.updateMemberships(tx, memberships.map((m) => m.id), { state: "suspended", updatedAt: now });
      await approvalsRepository.setApprovalStates(tx, data.targetUserId, networkIds, "approved", "suspended", now);
      const event = await killSwitchRepository.insertKillSwitch(tx, {
        organizationId: data.scope === "global" ? null : access.orgId,
        targetUserId: data.targetUserId,
        scope: data.scope,
        networkIds: data.scope === "selected_networks" ? networkIds : null,
        reason: data.reason,
        triggeredByUserId: access.actor.userId,
        sessionsEnded: ended.length,
        createdAt: now,
      });
      await this.deps.audit.record(tx, ctx, AuditAction.killSwitchTriggered, {
        organizationId: access.orgId,
        userId: data.targetUserId,
        resourceType: "kill_switch_event",
        resourceId: event.id,
        metadata: { scope: data.scope, reason: data.reason, networks: networkIds.length, sessions_ended: ended.length },
      });
      return { event, touched: memberships.map((m) => m.id) };
    });
    const synced = await this.deps.sync.apply(touched);
    return { event: toKillSwitchView(event), controllerSynced: synced.pending === 0 };
  }

  /** Lifts a kill switch: approvals and memberships it suspended are restored (activation stays off until the person asks). */
  async liftKillSwitch(ctx: RequestContext, orgId: string, eventId: string): Promise<KillSwitchView> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.manage");
    const id = parseId(eventId, NetworkErrors.killSwitchNotFound);
    return this.deps.db.transaction(async (tx) => {
      const found = await killSwitchRepository.killSwitch(tx, id);
      const visible = found && (found.organizationId === access.orgId || (found.organizationId === null && access.actor.isSuperadmin));
      if (!found || !visible) throw NetworkErrors.killSwitchNotFound();
      if (found.liftedAt) return toKillSwitchView(found);
      // Lifting is as strong as triggering: the lifter must outrank the person, and what a superadmin
      // switched off only a superadmin switches back on.
      await requireOutranks(tx, access, found.targetUserId);
      if (!access.actor.isSuperadmin && (await killSwitchRepository.isSuperadmin(tx, found.triggeredByUserId))) {
        throw CommonErrors.forbidden("Only a superadmin can lift a kill switch a superadmin triggered");
      }
      await killSwitchRepository.lockPerson(tx, found.targetUserId);
      const now = this.deps.clock.now();
      const lifted = await killSwitchRepository.updateKillSwitch(tx, found.id, { liftedAt: now, liftedByUserId: access.actor.userId });
      const networkIds = await killSwitchNetworks(tx, access.orgId, found.scope, found.networkIds ?? [], found.targetUserId);
      // Another kill switch still in force keeps its networks suspended.
      const free: string[] = [];
      for (const nid of networkIds) {
        const n = await portalNetworksRepository.networkAnyOrg(tx, nid);
        if (n && !(await killSwitchRepository.killSwitchInForce(tx, found.targetUserId, n))) free.push(nid);
      }
      await approvalsRepository.setApprovalStates(tx, found.targetUserId, free, "suspended", "approved", now);
      const suspended = (await deviceMembershipsRepository.membershipsOfUser(tx, found.targetUserId, { networkIds: free })).filter((m) => m.state === "suspended");
      await deviceMembershipsRepository.updateMemberships(tx, suspended.map((m) => m.id), { state: "approved_inactive", updatedAt: now });
      await this.deps.audit.record(tx, ctx, AuditAction.killSwitchLifted, { organizationId: access.orgId, userId: found.targetUserId, resourceType: "kill_switch_event", resourceId: found.id });
      return toKillSwitchView(lifted);
    });
  }

  async killSwitchHistory(ctx: RequestContext, orgId: string): Promise<KillSwitchView[]> {
    const { orgId: id } = await requireOrgAccess(this.deps.db, ctx, orgId, "networks.manage");
    return (await killSwitchRepository.killSwitchHistory(this.deps.db, id)).map((r) => toKillSwitchView(r.event, { email: r.targetEmail, fullName: r.targetName }));
  }

  /** Checks and records one activation inside the caller's transaction (the person's lock is held). */
  private async start(tx: Executor, ctx: RequestContext, access: OrgAccess, m: MembershipRow, requested: number | undefined, opts: { strict: boolean }) {
    const network = await portalNetworksRepository.network(tx, access.orgId, m.portalNetworkId);
    if (!network || !network.isActive) throw NetworkErrors.networkNotFound();
    if (await killSwitchRepository.killSwitchInForce(tx, m.userId, network)) throw NetworkErrors.suspended();
    const approval = m.approvalId ? await approvalsRepository.approvalById(tx, m.approvalId) : undefined;
    if (approval?.state === "suspended" || m.state === "suspended") throw NetworkErrors.suspended();
    if (approval?.state !== "approved" || !isActivatable(m.state)) throw NetworkErrors.notApproved();
    const device = await devicesRepository.device(tx, access.orgId, m.deviceId);
    if (!device || device.status !== "active") throw NetworkErrors.deviceNotFound();
    const minutes = activationMinutes(network, requested, opts.strict);
    const now = this.deps.clock.now();
    // A renewal replaces the running activation: one open activation per device and network.
    await activationSessionsRepository.endSessions(tx, [m.id], "logout", now);
    const session = await activationSessionsRepository.insertSession(tx, {
      organizationId: access.orgId,
      membershipId: m.id,
      userId: m.userId,
      authenticatedAt: now,
      expiresAt: new Date(now.getTime() + minutes * 60_000),
      createdBy: access.actor.userId,
    });
    await deviceMembershipsRepository.updateMemberships(tx, [m.id], { state: "active_authorized", updatedAt: now });
    await this.deps.audit.record(tx, ctx, AuditAction.activationStarted, {
      organizationId: access.orgId,
      resourceType: "activation_session",
      resourceId: session.id,
      metadata: { membership_id: m.id, network_id: network.id, node_id: device.nodeId, minutes },
    });
    return session;
  }

  private async end(tx: Executor, ctx: RequestContext, orgId: string, memberships: MembershipRow[], reason: EndReason, then: { state?: MembershipRow["state"]; remove?: boolean }) {
    const now = this.deps.clock.now();
    const ids = memberships.map((m) => m.id);
    const ended = await activationSessionsRepository.endSessions(tx, ids, reason, now);
    await deviceMembershipsRepository.updateMemberships(tx, ids, { ...(then.state ? { state: then.state } : {}), ...(then.remove ? { state: "revoked", deletedAt: now } : {}), updatedAt: now });
    for (const s of ended) {
      await this.deps.audit.record(tx, ctx, AuditAction.activationEnded, { organizationId: orgId, userId: s.userId, resourceType: "activation_session", resourceId: s.id, metadata: { reason, membership_id: s.membershipId } });
    }
  }

  private async removeMembership(ctx: RequestContext, access: OrgAccess, membershipId: string, opts: { self: boolean }): Promise<void> {
    const id = parseId(membershipId, NetworkErrors.membershipNotFound);
    await this.deps.db.transaction(async (tx) => {
      const m = await deviceMembershipsRepository.membership(tx, access.orgId, id);
      if (!m || (opts.self && m.userId !== access.actor.userId)) throw NetworkErrors.membershipNotFound();
      await this.end(tx, ctx, access.orgId, [m], opts.self ? "logout" : "admin_action", { remove: true });
      await this.deps.audit.record(tx, ctx, AuditAction.membershipRemoved, { organizationId: access.orgId, userId: m.userId, resourceType: "device_membership", resourceId: m.id });
    });
    await this.deps.sync.apply([id]);
  }

  /** One membership as it stands after a change; gone if its device was removed in the meantime. */
  private async view(orgId: string, id: string): Promise<MembershipView> {
    const [view] = await this.views({ orgId, ids: [id] });
    if (!view) throw NetworkErrors.membershipNotFound();
    return view;
  }

  private async views(where: { orgId: string; userId?: string; ids?: string[] }): Promise<MembershipView[]> {
    const now = this.deps.clock.now();
    return (await deviceMembershipsRepository.enrichedMemberships(this.deps.db, where, now)).map((m) => toMembershipView(m, now));
  }
}
