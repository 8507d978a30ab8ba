import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import { ControllerError } from "./controller/index.js";
import type { ControllerConfigService } from "./controller-config.service.js";
import { deviceMembershipsRepository } from "./device-memberships.repository.js";

export interface SyncResult {
  /** Memberships whose controller state now matches Keyward's intent. */
  applied: number;
  /** Left for the reconciliation job (controller down or not configured): the intent is recorded. */
  pending: number;
  /** Which memberships those are (an offboarding's receipt lists them). */
  pendingIds: string[];
}

/**
 * Applies Keyward's decision for some memberships at the controller at once, right after the
 * transaction that recorded it. A failure loses nothing: the intent is in the database and the
 * reconciliation job applies it when the controller answers again.
 */
export class ControllerSync {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly controllers: ControllerConfigService,
    private readonly logger: Logger,
  ) {}

  async apply(membershipIds: string[]): Promise<SyncResult> {
    const targets = await deviceMembershipsRepository.syncTargets(this.db, [...new Set(membershipIds)], this.clock.now());
    const result: SyncResult = { applied: 0, pending: 0, pendingIds: [] };
    const clients = new Map<string, Awaited<ReturnType<ControllerConfigService["clientFor"]>>>();
    for (const t of targets) {
      if (!clients.has(t.organizationId)) clients.set(t.organizationId, await this.controllers.clientFor(this.db, t.organizationId));
      const client = clients.get(t.organizationId);
      if (!client) {
        result.pending++;
        result.pendingIds.push(t.membershipId);
        continue;
      }
      try {
        await client.setAuthorized(t.zerotierNetworkId, t.nodeId, t.desired);
        let authorized = t.desired;
        // A kill switch or deactivation may have committed (and deauthorized) while this authorization
        // was on its way: look again, so the later call cannot leave the device on.
        if (authorized) {
          const [now] = await deviceMembershipsRepository.syncTargets(this.db, [t.membershipId], this.clock.now());
          if (!now?.desired) {
            await client.setAuthorized(t.zerotierNetworkId, t.nodeId, false);
            authorized = false;
          }
        }
        await deviceMembershipsRepository.updateMemberships(this.db, [t.membershipId], { currentlyAuthorized: authorized, lastSyncedAt: this.clock.now() });
        result.applied++;
      } catch (e) {
        if (!(e instanceof ControllerError)) throw e;
        this.logger.warn({ err: e, membershipId: t.membershipId, kind: e.kind }, "controller change deferred to reconciliation");
        result.pending++;
        result.pendingIds.push(t.membershipId);
      }
    }
    return result;
  }
}
