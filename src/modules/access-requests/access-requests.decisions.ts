import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { systemContext, type RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { EmailService } from "../email/index.js";
import { can, requireOrgAccess } from "../access/index.js";
import { AccessRequestErrors } from "./access-requests.errors.js";
import { notifyRequester } from "./access-requests.policies.js";
import { accessRequestsRepository as repo } from "./access-requests.repository.js";
import { checkApprover, checkDecision, targetMeta } from "./access-requests.rules.js";
import { revokeSchema, type RevokeInput } from "./access-requests.schemas.js";
import { toRequestView, type AccessRequestView } from "./access-requests.views.js";

// How a request ends: an approver's decision (or the requester's withdrawal), an early end to a
// grant in force, or lapsing undecided; each with its audit record.

/** What these need of the service's dependencies (AccessRequestsDeps). */
interface Deps {
  db: Db;
  clock: Clock;
  audit: AuditService;
  email: EmailService;
}

/**
 * Approve, reject or cancel: tenancy and the body, then under the request's lock the rules of who may
 * take this step now (access-requests.rules.ts), the new state, its audit record and the requester told.
 */
export async function decideRequest(
  deps: Deps,
  ctx: RequestContext,
  orgId: string,
  requestId: string,
  action: "approve" | "reject" | "cancel",
  parse: () => { reason: string | null; minutes?: number },
): Promise<AccessRequestView> {
  // Approvers are the organization's admins and owners; anyone who may ask may cancel their own.
  // Tenancy before the body: an outsider learns nothing, not even which fields are wrong.
  const access = await requireOrgAccess(deps.db, ctx, orgId, action === "cancel" ? "ssh.sign" : "principals.manage");
  const { reason, minutes } = parse();
  const id = parseId(requestId, AccessRequestErrors.notFound);
  const approver = can(access.membership.role, "principals.manage");
  const { clock, audit } = deps;
  const row = await deps.db.transaction(async (tx) => {
    // Locked: of twenty approvals at once, one decides and the others find it decided.
    const current = await repo.lock(tx, access.orgId, id);
    if (!current) throw AccessRequestErrors.notFound();
    const now = clock.now();
    checkDecision(current, current.userId === access.actor.userId, approver, action, now, minutes);
    if (action !== "cancel") checkApprover(access, current);
    const granted = minutes ?? current.requestedMinutes;
    const state = action === "approve" ? "approved" : action === "reject" ? "rejected" : "cancelled";
    const updated = await repo.update(tx, current.id, {
      state,
      decidedByUserId: access.actor.userId,
      decidedAt: now,
      decisionReason: reason,
      ...(action === "approve" ? { grantedMinutes: granted, grantStartsAt: now, grantEndsAt: new Date(now.getTime() + granted * 60_000) } : {}),
      updatedAt: now,
    });
    const auditAction = action === "approve" ? AuditAction.accessApproved : action === "reject" ? AuditAction.accessRejected : AuditAction.accessCancelled;
    await audit.record(tx, ctx, auditAction, {
      organizationId: access.orgId,
      userId: current.userId,
      resourceType: "access_request",
      resourceId: current.id,
      metadata: {
        ...targetMeta(current),
        reason,
        ...(action === "approve" ? { minutes: granted, requested_minutes: current.requestedMinutes, grant_ends_at: updated.grantEndsAt!.toISOString() } : {}),
        ...(current.kind === "role" ? { stored_role: await repo.storedRole(tx, current.organizationId, current.userId) } : {}),
      },
    });
    if (action !== "cancel") await notifyRequester(deps, tx, access, updated);
    return { updated, person: await repo.person(tx, current.userId) };
  });
  return toRequestView(row.updated, clock.now(), { email: row.person?.email ?? "", fullName: row.person?.fullName ?? null, organizationName: access.membership.organizationName });
}

/**
 * An approver ends a grant in force early, with a reason: its end moves to now, so signing (which
 * reads grants by time) leaves it out from the next certificate on. Approvers may end their own
 * grant too (giving access up needs no second person); a plain member learns nothing.
 */
export async function revokeGrant(deps: Deps, ctx: RequestContext, orgId: string, requestId: string, input: RevokeInput): Promise<AccessRequestView> {
  const access = await requireOrgAccess(deps.db, ctx, orgId, "principals.manage");
  const { reason } = parseInput(revokeSchema, input ?? {});
  const id = parseId(requestId, AccessRequestErrors.notFound);
  const { clock, audit } = deps;
  const row = await deps.db.transaction(async (tx) => {
    // Locked: of twenty revocations at once, one ends the grant and the others find it ended.
    const current = await repo.lock(tx, access.orgId, id);
    if (!current) throw AccessRequestErrors.notFound();
    const now = clock.now();
    if (current.state !== "approved") throw AccessRequestErrors.notInForce(`is ${current.state === "pending" && current.expiresAt <= now ? "expired" : current.state}`);
    if (current.revokedAt) throw AccessRequestErrors.notInForce("was already ended early");
    if (!current.grantEndsAt || current.grantEndsAt <= now) throw AccessRequestErrors.notInForce("has already ended");
    const updated = await repo.update(tx, current.id, { grantEndsAt: now, revokedAt: now, revokedByUserId: access.actor.userId, revokeReason: reason, updatedAt: now });
    await audit.record(tx, ctx, AuditAction.accessRevoked, {
      organizationId: access.orgId,
      userId: current.userId,
      resourceType: "access_request",
      resourceId: current.id,
      metadata: { ...targetMeta(current), reason, granted_until: current.grantEndsAt.toISOString(), ended_at: now.toISOString() },
    });
    if (current.userId !== access.actor.userId) await notifyRequester(deps, tx, access, updated);
    return { updated, person: await repo.person(tx, current.userId) };
  });
  return toRequestView(row.updated, clock.now(), { email: row.person?.email ?? "", fullName: row.person?.fullName ?? null, organizationName: access.membership.organizationName });
}

/** Pending requests past their time become expired, each with its audit record (actor: the system). */
export async function lapsePending(deps: Pick<Deps, "audit">, db: Executor, now: Date, where: { orgIds?: string[]; userId?: string }): Promise<void> {
  const lapsed = await repo.lapse(db, now, where);
  for (const r of lapsed) {
    await deps.audit.record(db, systemContext(), AuditAction.accessExpired, {
      organizationId: r.organizationId,
      userId: r.userId,
      resourceType: "access_request",
      resourceId: r.id,
      metadata: { ...targetMeta(r), expired_at: r.expiresAt.toISOString() },
    });
  }
}
