import type { Clock } from "../../infra/clock.js";
import type { Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { ControllerSync } from "./controller-sync.js";
import { activationSessionsRepository } from "./activation-sessions.repository.js";
import { approvalsRepository } from "./approvals.repository.js";
import { deviceMembershipsRepository } from "./device-memberships.repository.js";
import { killSwitchRepository } from "./kill-switch.repository.js";
import { portalNetworksRepository } from "./portal-networks.repository.js";

/**
 * Network access ends with the standing that granted it: leaving or being removed from an
 * organization, suspension, account or organization deletion. Runs inside the caller's
 * transaction (activations end, memberships and devices go); `apply` after the commit takes the
 * devices off the controller at once, and reconciliation finishes whatever it could not.
 */
export class NetworkOffboarding {
  constructor(
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly sync: ControllerSync,
  ) {}

  /** Returns the memberships to take off the controller once the transaction has committed. */
  async personLeft(tx: Executor, ctx: RequestContext, v: { userId: string; organizationId?: string; why: "left" | "suspended" | "deleted" }): Promise<string[]> {
    const now = this.clock.now();
    await killSwitchRepository.lockPerson(tx, v.userId);
    const memberships = await deviceMembershipsRepository.membershipsOfUser(tx, v.userId, { orgId: v.organizationId });
    const ids = memberships.map((m) => m.id);
    const ended = await activationSessionsRepository.endSessions(tx, ids, "admin_action", now);
    if (v.why === "suspended") {
      // Suspension can be lifted: standing stays, running access ends.
      await deviceMembershipsRepository.updateMemberships(tx, memberships.filter((m) => m.state === "active_authorized").map((m) => m.id), { state: "approved_inactive", updatedAt: now });
    } else {
      await deviceMembershipsRepository.updateMemberships(tx, ids, { state: "revoked", deletedAt: now, updatedAt: now });
      await approvalsRepository.revokeStanding(tx, v.userId, v.organizationId, now);
    }
    for (const s of ended) {
      await this.audit.record(tx, ctx, AuditAction.activationEnded, { organizationId: s.organizationId, userId: s.userId, resourceType: "activation_session", resourceId: s.id, metadata: { reason: `account_${v.why}` } });
    }
    return ids;
  }

  /**
   * An organization's deletion locks its networks first, before any account or membership (the
   * order approvals and joins take: network, then person): a join or an approval in flight either
   * commits before the deletion or finds the network gone. Called by the deletions themselves.
   */
  async lockNetworksOf(tx: Executor, organizationIds: string[]): Promise<void> {
    await portalNetworksRepository.lockNetworksOf(tx, organizationIds);
  }

  /** The organization is deleted: every activation ends and its networks are cleaned up at the controller. */
  async organizationDeleted(tx: Executor, ctx: RequestContext, organizationId: string): Promise<string[]> {
    const now = this.clock.now();
    await this.lockNetworksOf(tx, [organizationId]);
    const networks = await portalNetworksRepository.listNetworks(tx, organizationId, true);
    const ids: string[] = [];
    for (const n of networks) {
      const memberships = await deviceMembershipsRepository.membershipsOfNetwork(tx, n.id);
      ids.push(...memberships.map((m) => m.id));
      await activationSessionsRepository.endSessions(tx, memberships.map((m) => m.id), "admin_action", now);
      await deviceMembershipsRepository.updateMemberships(tx, memberships.map((m) => m.id), { state: "revoked", updatedAt: now });
      await portalNetworksRepository.updateNetwork(tx, n.id, { deletedAt: now, isActive: false, updatedAt: now });
    }
    if (networks.length > 0) await this.audit.record(tx, ctx, AuditAction.networkDeleted, { organizationId, metadata: { reason: "organization deleted", networks: networks.length } });
    return ids;
  }

  /** After the commit: the controller is told now (failures are left to reconciliation). */
  async apply(membershipIds: string[]): Promise<void> {
    await this.applyListed(membershipIds);
  }

  /** The same, answering which memberships are left for reconciliation (controller down or unset). */
  async applyListed(membershipIds: string[]): Promise<{ pendingIds: string[] }> {
    if (membershipIds.length === 0) return { pendingIds: [] };
    return { pendingIds: (await this.sync.apply(membershipIds)).pendingIds };
  }
}
