import { z } from "zod";
import { AppError, CommonErrors } from "../../lib/errors.js";
import { paginationSchema, toPage, type Page } from "../../lib/pagination.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/index.js";
import { activationSessionsRepository } from "./activation-sessions.repository.js";
import { approvalsRepository } from "./approvals.repository.js";
import { deviceMembershipsRepository } from "./device-memberships.repository.js";
import { globalKillSwitchRepository } from "./global-kill-switch.repository.js";
import { killSwitchRepository } from "./kill-switch.repository.js";
import type { NetworksCore } from "./networks.core.js";
import { NetworkErrors } from "./networks.errors.js";
import { portalNetworksRepository } from "./portal-networks.repository.js";
import { requirePersonalUser } from "../access/index.js";

export const globalKillSwitchSchema = z.object({
  targetUserId: z.uuid(),
  reason: z.string().trim().max(2000).nullish().transform((v) => (v ? v : null)),
});
export type GlobalKillSwitchInput = z.input<typeof globalKillSwitchSchema>;
export const globalKillSwitchListSchema = paginationSchema.extend({
  // A query string says "true" or "false"; GraphQL a boolean.
  inForce: z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")]).optional(),
});
export type GlobalKillSwitchListInput = z.input<typeof globalKillSwitchListSchema>;

export interface AccountName {
  id: string;
  email: string;
  fullName: string | null;
  deleted: boolean;
}

export interface GlobalKillSwitchView {
  id: string;
  target: AccountName;
  reason: string | null;
  sessionsEnded: number;
  createdAt: Date;
  triggeredBy: AccountName | null;
  liftedAt: Date | null;
  liftedBy: AccountName | null;
}

export interface GlobalKillSwitchPreview {
  person: { id: string; email: string; fullName: string | null };
  /** The global kill switch already in force on the person, if any. */
  inForceEventId: string | null;
  /** Each device membership in each organization, and whether an activation runs on it now. */
  memberships: Array<{ organizationName: string; networkName: string; deviceName: string; state: string; activeUntil: Date | null }>;
}

type Row = NonNullable<Awaited<ReturnType<typeof globalKillSwitchRepository.one>>>;
const named = (p: { id: string | null; email: string | null; fullName: string | null; deleted: boolean | null } | null): AccountName | null =>
  p?.id ? { id: p.id, email: p.email!, fullName: p.fullName, deleted: p.deleted === true } : null;
const toView = (r: Row): GlobalKillSwitchView => ({
  id: r.event.id,
  target: named(r.target)!,
  reason: r.event.reason,
  sessionsEnded: r.event.sessionsEnded,
  createdAt: r.event.createdAt,
  triggeredBy: named(r.triggeredBy),
  liftedAt: r.event.liftedAt,
  liftedBy: named(r.liftedBy),
});

const inForceError = () => new AppError("KILL_SWITCH_IN_FORCE", 409, "A global kill switch on this person is already in force: lift it first");

/**
 * The global kill switch (superadmins only): one person cut off every network of every
 * organization at once — activations end, devices are deauthorized at the controllers, approvals
 * are suspended — until an operator lifts it. The organization's own kill switch
 * (AccessService.killSwitch) is the same act within one organization, for its admins.
 */
export class GlobalKillSwitchService {
  constructor(private readonly deps: Pick<NetworksCore, "db" | "clock" | "audit" | "sync">) {}

  async list(ctx: RequestContext, input: GlobalKillSwitchListInput): Promise<Page<GlobalKillSwitchView>> {
    operator(ctx);
    const q = parseInput(globalKillSwitchListSchema, input ?? {});
    const { rows, total } = await globalKillSwitchRepository.page(this.deps.db, { inForce: q.inForce, limit: q.perPage, offset: (q.page - 1) * q.perPage });
    return toPage(rows.map(toView), total, q.page, q.perPage);
  }

  /** What a global kill switch on this person would cut, for the confirmation that names it. */
  async preview(ctx: RequestContext, userId: string): Promise<GlobalKillSwitchPreview> {
    operator(ctx);
    const id = parseId(userId, () => CommonErrors.notFound("User"));
    const { db, clock } = this.deps;
    const [found, inForce, reach] = await Promise.all([globalKillSwitchRepository.person(db, id), globalKillSwitchRepository.inForceOn(db, id), globalKillSwitchRepository.reachOf(db, id, clock.now())]);
    if (!found) throw CommonErrors.notFound("User");
    return { person: found, inForceEventId: inForce ?? null, memberships: reach.map(({ membershipId: _, ...m }) => m) };
  }

  async trigger(ctx: RequestContext, input: GlobalKillSwitchInput): Promise<{ event: GlobalKillSwitchView; controllerSynced: boolean }> {
    const actor = operator(ctx);
    const data = parseInput(globalKillSwitchSchema, input);
    // Not oneself: an operator who cut themselves off could not undo it from the networks they lost.
    if (data.targetUserId === actor.userId) throw CommonErrors.badRequest("You cannot use the kill switch on yourself");
    const { db, clock, audit } = this.deps;
    const { id, touched } = await db.transaction(async (tx) => {
      await killSwitchRepository.lockPerson(tx, data.targetUserId);
      if (!(await globalKillSwitchRepository.person(tx, data.targetUserId))) throw CommonErrors.notFound("User");
      // One global kill switch per person at a time: lifting it must give access back.
      if (await globalKillSwitchRepository.inForceOn(tx, data.targetUserId)) throw inForceError();
      const networkIds = await deviceMembershipsRepository.networkIdsOfPerson(tx, data.targetUserId);
      const now = clock.now();
      const memberships = await deviceMembershipsRepository.membershipsOfUser(tx, data.targetUserId, { networkIds });
      const ended = await activationSessionsRepository.endSessions(tx, memberships.map((m) => m.id), "kill_switch", now);
      await deviceMembershipsRepository.updateMemberships(tx, memberships.map((m) => m.id), { state: "suspended", updatedAt: now });
      await approvalsRepository.setApprovalStates(tx, data.targetUserId, networkIds, "approved", "suspended", now);
      const event = await killSwitchRepository.insertKillSwitch(tx, {
        organizationId: null,
        targetUserId: data.targetUserId,
        scope: "global",
        networkIds: null,
        reason: data.reason,
        triggeredByUserId: actor.userId,
        sessionsEnded: ended.length,
        createdAt: now,
      });
      await audit.record(tx, ctx, AuditAction.killSwitchTriggered, {
        userId: data.targetUserId,
        resourceType: "kill_switch_event",
        resourceId: event.id,
        metadata: { scope: "global", reason: data.reason, networks: networkIds.length, sessions_ended: ended.length },
      });
      return { id: event.id, touched: memberships.map((m) => m.id) };
    });
    // Committed first, then applied at the controllers; reconciliation finishes what they did not take.
    const synced = await this.deps.sync.apply(touched);
    return { event: toView((await globalKillSwitchRepository.one(db, id))!), controllerSynced: synced.pending === 0 };
  }

  /** Lifts a global kill switch: what it suspended comes back as approved (devices stay off until their owner switches them on). */
  async lift(ctx: RequestContext, eventId: string): Promise<GlobalKillSwitchView> {
    const actor = operator(ctx);
    const id = parseId(eventId, NetworkErrors.killSwitchNotFound);
    const { db, clock, audit } = this.deps;
    await db.transaction(async (tx) => {
      const found = await killSwitchRepository.killSwitch(tx, id);
      // An organization's kill switch is lifted in that organization.
      if (!found || found.organizationId !== null || found.scope !== "global") throw NetworkErrors.killSwitchNotFound();
      if (found.liftedAt) return;
      await killSwitchRepository.lockPerson(tx, found.targetUserId);
      const now = clock.now();
      await killSwitchRepository.updateKillSwitch(tx, found.id, { liftedAt: now, liftedByUserId: actor.userId });
      // Another kill switch still in force (an organization's) keeps its networks suspended.
      const free: string[] = [];
      for (const nid of await deviceMembershipsRepository.networkIdsOfPerson(tx, found.targetUserId)) {
        const n = await portalNetworksRepository.networkAnyOrg(tx, nid);
        if (n && !(await killSwitchRepository.killSwitchInForce(tx, found.targetUserId, n))) free.push(nid);
      }
      await approvalsRepository.setApprovalStates(tx, found.targetUserId, free, "suspended", "approved", now);
      const suspended = (await deviceMembershipsRepository.membershipsOfUser(tx, found.targetUserId, { networkIds: free })).filter((m) => m.state === "suspended");
      await deviceMembershipsRepository.updateMemberships(tx, suspended.map((m) => m.id), { state: "approved_inactive", updatedAt: now });
      await audit.record(tx, ctx, AuditAction.killSwitchLifted, { userId: found.targetUserId, resourceType: "kill_switch_event", resourceId: found.id, metadata: { scope: "global" } });
    });
    return toView((await globalKillSwitchRepository.one(db, id))!);
  }
}

/** Superadmins in person (a delegated token never reaches operator power). */
function operator(ctx: RequestContext) {
  const actor = requirePersonalUser(ctx);
  if (!actor.isSuperadmin) throw CommonErrors.forbidden("Only superadmins use the global kill switch");
  return actor;
}
