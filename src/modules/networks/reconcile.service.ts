import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import { uuid } from "../../lib/crypto/index.js";
import { CommonErrors } from "../../lib/errors.js";
import { systemContext, type RequestContext } from "../../lib/request-context.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { ControllerError, type ControllerClient } from "./controller/index.js";
import type { ControllerConfigService } from "./controller-config.service.js";
import { activationSessionsRepository } from "./activation-sessions.repository.js";
import { deviceMembershipsRepository } from "./device-memberships.repository.js";
import { leasesRepository } from "./leases.repository.js";
import { portalNetworksRepository } from "./portal-networks.repository.js";
import type { PortalNetworkRow } from "./networks.repository.js";
import { requireOrgAccess, requireUser } from "../access/index.js";

export interface ReconcileReport {
  networksProcessed: number;
  /** Authorizations and deauthorizations made at the controller. */
  changes: number;
  /** Activations that ran out in this pass. */
  expired: number;
  /** Networks that could not be processed (the intent stays recorded; the next pass retries). */
  errors: Array<{ networkId: string; zerotierNetworkId: string; error: string }>;
  /** Calls made to controllers. */
  controllerCalls: number;
}

const LEASE = "network-reconcile";

/**
 * Keeps every controller equal to what Keyward decided. The desired state of a portal network is
 * "the devices with an unexpired activation are authorized, nothing else is": strays authorized
 * behind Keyward's back are deauthorized, missing authorizations are restored, expired
 * activations end. Runs every tick on one instance (a lease row) and on demand.
 */
export class ReconcileService {
  private readonly instance = uuid();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly controllers: ControllerConfigService,
    private readonly logger: Logger,
    private readonly config: { intervalMs: number },
  ) {}

  /** The scheduled pass; null when another instance holds this tick. */
  async tick(): Promise<ReconcileReport | null> {
    const now = this.clock.now();
    // The lease lapses just before the next tick, so a crashed holder delays one pass at most.
    const until = new Date(now.getTime() + Math.floor(this.config.intervalMs * 0.9));
    if (!(await leasesRepository.claimLease(this.db, LEASE, this.instance, now, until))) return null;
    return this.run(systemContext("network-reconcile"));
  }

  /** On demand by an organization's admins, for its networks. */
  async reconcileOrg(ctx: RequestContext, orgId: string): Promise<ReconcileReport> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "networks.manage");
    return this.run(ctx, id);
  }

  /** On demand by a superadmin, for every organization. */
  async reconcileAll(ctx: RequestContext): Promise<ReconcileReport> {
    if (!requireUser(ctx).isSuperadmin) throw CommonErrors.forbidden("Superadmin access required");
    return this.run(ctx);
  }

  private async run(ctx: RequestContext, orgId?: string): Promise<ReconcileReport> {
    const now = this.clock.now();
    const report: ReconcileReport = { networksProcessed: 0, changes: 0, expired: 0, errors: [], controllerCalls: 0 };
    const expired = await this.db.transaction(async (tx) => {
      const ended = await activationSessionsRepository.expireSessions(tx, now, orgId);
      for (const s of ended) {
        await this.audit.record(tx, ctx, AuditAction.activationEnded, { organizationId: s.organizationId, userId: s.userId, resourceType: "activation_session", resourceId: s.id, metadata: { reason: "expired", membership_id: s.membershipId } });
      }
      return ended.length;
    });
    report.expired = expired;
    const clients = new Map<string, ControllerClient | null>();
    for (const network of await portalNetworksRepository.networksToReconcile(this.db, orgId)) {
      if (!clients.has(network.organizationId)) clients.set(network.organizationId, await this.controllers.clientFor(this.db, network.organizationId));
      const client = clients.get(network.organizationId);
      if (!client) {
        report.errors.push({ networkId: network.id, zerotierNetworkId: network.zerotierNetworkId, error: "controller_not_configured" });
        continue;
      }
      try {
        await this.network(ctx, client, network, now, report);
        report.networksProcessed++;
      } catch (e) {
        if (!(e instanceof ControllerError)) throw e;
        this.logger.warn({ err: e, networkId: network.id, kind: e.kind }, "reconciliation of a network failed; retried next pass");
        report.errors.push({ networkId: network.id, zerotierNetworkId: network.zerotierNetworkId, error: e.kind });
      }
    }
    return report;
  }

  private async network(ctx: RequestContext, client: ControllerClient, network: PortalNetworkRow, now: Date, report: ReconcileReport): Promise<void> {
    const nwid = network.zerotierNetworkId;
    report.controllerCalls++;
    const remote = await client.listMembers(nwid);
    const governed = network.deletedAt === null;
    const known = await deviceMembershipsRepository.membershipNodes(this.db, network.id, now);
    const desired = new Set(known.filter((k) => k.desired).map((k) => k.nodeId));
    const knownNodes = new Set(known.map((k) => k.nodeId));
    const authorizedNow = new Set<string>();
    const seen = new Set<string>();

    const correct = async (nodeId: string, authorize: boolean, why: string) => {
      report.controllerCalls++;
      await client.setAuthorized(nwid, nodeId, authorize);
      report.changes++;
      await this.audit.record(this.db, ctx, AuditAction.reconcileCorrection, {
        organizationId: network.organizationId,
        resourceType: "portal_network",
        resourceId: network.id,
        metadata: { node_id: nodeId, action: authorize ? "authorize" : "deauthorize", why },
      });
    };

    for (const member of remote) {
      if (member.lastSeen) seen.add(member.nodeId);
      const want = desired.has(member.nodeId);
      // A deleted network is no longer governed: only what Keyward put there comes off.
      if (member.authorized && !want && (governed || knownNodes.has(member.nodeId))) {
        await correct(member.nodeId, false, knownNodes.has(member.nodeId) ? "no_active_activation" : "stray");
      } else if (!member.authorized && want) {
        await correct(member.nodeId, true, "missing_authorization");
      }
      if (want) authorizedNow.add(member.nodeId);
    }
    for (const nodeId of desired) {
      if (authorizedNow.has(nodeId)) continue;
      // Never joined yet: authorizing creates the member record, so the device is admitted when it joins.
      await correct(nodeId, true, "missing_member");
      authorizedNow.add(nodeId);
    }

    for (const k of known) {
      const authorized = authorizedNow.has(k.nodeId);
      const joined = k.joinSeen || seen.has(k.nodeId);
      if (k.currentlyAuthorized !== authorized || k.joinSeen !== joined) {
        await deviceMembershipsRepository.updateMemberships(this.db, [k.membershipId], { currentlyAuthorized: authorized, joinSeen: joined, lastSyncedAt: now });
      }
    }
    if (!governed) await portalNetworksRepository.updateNetwork(this.db, network.id, { cleanedUpAt: now });
  }
}
