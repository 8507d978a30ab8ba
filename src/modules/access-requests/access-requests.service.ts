import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { uniqueOr } from "../../infra/db-errors.js";
import { systemContext, type RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { EmailService } from "../email/index.js";
import { can, requireOrgAccess, requireUser, type OrgAccess } from "../access/index.js";
import { AccessRequestErrors } from "./access-requests.errors.js";
import { checkDecision, resolveTarget, targetLabel, targetMeta, targetName } from "./access-requests.rules.js";
import { accessRequestsRepository as repo, type AccessRequestRow, type ActiveGrant } from "./access-requests.repository.js";
import {
  accessPolicySchema,
  approveSchema,
  listRequestsSchema,
  rejectSchema,
  requestAccessSchema,
  revokeSchema,
  type AccessPolicyInput,
  type ApproveInput,
  type ListRequestsInput,
  type RejectInput,
  type RequestAccessInput,
  type RevokeInput,
} from "./access-requests.schemas.js";
import {
  toDepartmentPolicyView,
  toPolicyView,
  toRequestView,
  type AccessPolicyView,
  type AccessRequestView,
  type DepartmentAccessPolicyView,
} from "./access-requests.views.js";

/** What every request policy holds (principal, department). */
type PolicyFields = { requestable: boolean; requesterDepartmentId: string | null; maxMinutes: number; approvalRequired: boolean };

/** A pending request lapses after this long without a decision. */
export const PENDING_TTL_MS = 24 * 3600_000;

export interface AccessRequestsDeps {
  db: Db;
  clock: Clock;
  audit: AuditService;
  email: EmailService;
  config: { appUrl: string };
}

/**
 * Just-in-time access (issue 37): a member asks for a principal for a bounded time with a reason;
 * an admin or owner of the organization (never the requester: rule 20) approves, possibly for less
 * time, or rejects with a reason; a policy may approve at once (on-call), audited the same way.
 * An approved request is a grant signing reads by time: it ends by itself.
 */
export class AccessRequestsService {
  constructor(private readonly deps: AccessRequestsDeps) {}

  async request(ctx: RequestContext, orgId: string, input: RequestAccessInput): Promise<AccessRequestView> {
    // Tenancy first: an outsider learns nothing, not even which fields are wrong.
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "ssh.sign");
    const data = parseInput(requestAccessSchema, input);
    const minutes = data.minutes;
    const { db, clock } = this.deps;
    const target = await resolveTarget(db, access, data);
    const policy = target.policy;
    const automatic = !policy.approvalRequired;
    const row = await uniqueOr(
      () =>
        db.transaction(async (tx) => {
          const now = clock.now();
          // A pending request of the same principal that lapsed makes way for this one.
          await this.lapse(tx, now, { orgIds: [access.orgId], userId: access.actor.userId });
          const created = await repo.insert(tx, {
            organizationId: access.orgId,
            userId: access.actor.userId,
            kind: target.kind,
            ...(target.kind === "principal" ? { principalId: target.id, principalName: target.name } : { departmentId: target.id, departmentName: target.name }),
            state: automatic ? "approved" : "pending",
            reason: data.reason,
            requestedMinutes: minutes,
            expiresAt: new Date(now.getTime() + PENDING_TTL_MS),
            ...(automatic ? { decidedAt: now, grantedMinutes: minutes, grantStartsAt: now, grantEndsAt: new Date(now.getTime() + minutes * 60_000) } : {}),
            createdAt: now,
            updatedAt: now,
          });
          const metadata = { [target.kind]: target.name, minutes, reason: data.reason };
          await this.deps.audit.record(tx, ctx, AuditAction.accessRequested, { organizationId: access.orgId, resourceType: "access_request", resourceId: created.id, metadata });
          if (automatic) {
            // On-call: the policy approves at once; the trail says so, with the grant's end.
            await this.deps.audit.record(tx, ctx, AuditAction.accessApproved, {
              organizationId: access.orgId,
              userId: access.actor.userId,
              resourceType: "access_request",
              resourceId: created.id,
              metadata: { [target.kind]: target.name, minutes, automatic: true, grant_ends_at: created.grantEndsAt!.toISOString() },
            });
          } else {
            await this.notifyApprovers(tx, access, created);
          }
          return created;
        }),
      { access_requests_user_principal_pending_uq: AccessRequestErrors.exists, access_requests_user_department_pending_uq: AccessRequestErrors.departmentExists },
    );
    return toRequestView(row, clock.now(), { email: access.actor.email, fullName: null, organizationName: access.membership.organizationName });
  }

  /** The caller's own requests and grants, in every organization they belong to. */
  async mine(ctx: RequestContext): Promise<AccessRequestView[]> {
    const actor = requireUser(ctx);
    const now = this.deps.clock.now();
    return (await repo.ofUser(this.deps.db, actor.userId)).map((r) => toRequestView(r.request, now, r));
  }

  /** An organization's requests (admins and owners): everyone's, optionally in one state. */
  async list(ctx: RequestContext, orgId: string, query: ListRequestsInput = {}): Promise<AccessRequestView[]> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "principals.manage");
    const q = parseInput(listRequestsSchema, query ?? {});
    const now = this.deps.clock.now();
    await this.lapse(this.deps.db, now, { orgIds: [access.orgId] });
    return (await repo.ofOrganizations(this.deps.db, [access.orgId], q.state)).map((r) => toRequestView(r.request, now, r));
  }

  /**
   * Requests waiting for the caller's decision: pending ones in the organizations where they
   * approve (one, or all of them), never their own.
   */
  async pending(ctx: RequestContext, orgId?: string | null): Promise<AccessRequestView[]> {
    const actor = requireUser(ctx);
    let orgIds: string[];
    if (orgId) orgIds = [(await requireOrgAccess(this.deps.db, ctx, orgId, "principals.manage")).orgId];
    else orgIds = await repo.approverOrgIds(this.deps.db, actor.userId);
    const now = this.deps.clock.now();
    await this.lapse(this.deps.db, now, { orgIds });
    return (await repo.ofOrganizations(this.deps.db, orgIds, "pending")).filter((r) => r.request.userId !== actor.userId).map((r) => toRequestView(r.request, now, r));
  }

  async approve(ctx: RequestContext, orgId: string, requestId: string, input: ApproveInput = {}): Promise<AccessRequestView> {
    return this.decide(ctx, orgId, requestId, "approve", () => {
      const data = parseInput(approveSchema, input ?? {});
      return { reason: data.reason ?? null, minutes: data.minutes };
    });
  }

  async reject(ctx: RequestContext, orgId: string, requestId: string, input: RejectInput): Promise<AccessRequestView> {
    return this.decide(ctx, orgId, requestId, "reject", () => ({ reason: parseInput(rejectSchema, input ?? {}).reason }));
  }

  /** The requester withdraws a pending request. */
  async cancel(ctx: RequestContext, orgId: string, requestId: string): Promise<AccessRequestView> {
    return this.decide(ctx, orgId, requestId, "cancel", () => ({ reason: null }));
  }

  /** An organization's request policies, one per principal that has one. */
  async policies(ctx: RequestContext, orgId: string): Promise<AccessPolicyView[]> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "principals.read");
    return (await repo.policies(this.deps.db, access.orgId)).map((r) => toPolicyView(r.policy, r.principalName));
  }

  /** Admins: whether, by whom, for how long and with or without approval a principal may be asked for. */
  async setPolicy(ctx: RequestContext, orgId: string, principalId: string, input: AccessPolicyInput): Promise<AccessPolicyView> {
    const { row, target } = await this.savePolicy(ctx, orgId, "principal", principalId, input, (tx, v, id) => repo.upsertPolicy(tx, { ...v, principalId: id }));
    return toPolicyView(row, target.name);
  }

  /** An organization's department request policies, one per department that has one. */
  async departmentPolicies(ctx: RequestContext, orgId: string): Promise<DepartmentAccessPolicyView[]> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "principals.read");
    return (await repo.departmentPolicies(this.deps.db, access.orgId)).map((r) => toDepartmentPolicyView(r.policy, r.departmentName));
  }

  /**
   * Admins: whether, by whom, for how long and with or without approval a department's grants may
   * be asked for (while granted: the department's principals in `ssh sign`, as if a member).
   */
  async setDepartmentPolicy(ctx: RequestContext, orgId: string, departmentId: string, input: AccessPolicyInput): Promise<DepartmentAccessPolicyView> {
    const { row, target } = await this.savePolicy(ctx, orgId, "department", departmentId, input, (tx, v, id) => repo.upsertDepartmentPolicy(tx, { ...v, departmentId: id }));
    return toDepartmentPolicyView(row, target.name);
  }

  /**
   * The one path that sets a request policy, whatever it is for: tenancy, the body, the target (another
   * organization's is as unknown as a missing one), the requesters' department, the upsert and its
   * audit record, in one transaction.
   */
  private async savePolicy<R extends PolicyFields>(
    ctx: RequestContext,
    orgId: string,
    kind: "principal" | "department",
    targetId: string,
    input: AccessPolicyInput,
    upsert: (tx: Executor, fields: PolicyFields & { organizationId: string; createdAt: Date; updatedAt: Date }, targetId: string) => Promise<R>,
  ) {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "principals.manage");
    const data = parseInput(accessPolicySchema, input ?? {});
    const notFound = kind === "principal" ? AccessRequestErrors.principalNotFound : AccessRequestErrors.departmentNotFound;
    const id = parseId(targetId, notFound);
    return this.deps.db.transaction(async (tx) => {
      const target = kind === "principal" ? await repo.principal(tx, access.orgId, { id }) : await repo.department(tx, access.orgId, id);
      if (!target) throw notFound();
      if (data.requesterDepartmentId && !(await repo.department(tx, access.orgId, data.requesterDepartmentId))) {
        throw AccessRequestErrors.departmentNotFound();
      }
      const now = this.deps.clock.now();
      const fields = {
        organizationId: access.orgId,
        requestable: data.requestable,
        requesterDepartmentId: data.requesterDepartmentId ?? null,
        maxMinutes: data.maxDurationMinutes,
        approvalRequired: data.approvalRequired,
        createdAt: now,
        updatedAt: now,
      };
      const row = await upsert(tx, fields, target.id);
      await this.deps.audit.record(tx, ctx, AuditAction.accessPolicySet, {
        organizationId: access.orgId,
        resourceType: kind,
        resourceId: target.id,
        metadata: { [kind]: target.name, requestable: row.requestable, requester_department_id: row.requesterDepartmentId, max_minutes: row.maxMinutes, approval_required: row.approvalRequired },
      });
      return { row, target };
    });
  }

  /**
   * An approver ends a grant in force early, with a reason: its end moves to now, so signing (which
   * reads grants by time) leaves it out from the next certificate on. Approvers may end their own
   * grant too (giving access up needs no second person); a plain member learns nothing.
   */
  async revoke(ctx: RequestContext, orgId: string, requestId: string, input: RevokeInput): Promise<AccessRequestView> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "principals.manage");
    const { reason } = parseInput(revokeSchema, input ?? {});
    const id = parseId(requestId, AccessRequestErrors.notFound);
    const { clock, audit } = this.deps;
    const row = await this.deps.db.transaction(async (tx) => {
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
      if (current.userId !== access.actor.userId) await this.notifyRequester(tx, access, updated);
      return { updated, person: await repo.person(tx, current.userId) };
    });
    return toRequestView(row.updated, clock.now(), { email: row.person?.email ?? "", fullName: row.person?.fullName ?? null, organizationName: access.membership.organizationName });
  }

  /** The port signing asks: the person's grants in force in the organization at `at`. */
  activeGrants(userId: string, orgId: string, at: Date): Promise<ActiveGrant[]> {
    return repo.activeGrants(this.deps.db, userId, orgId, at);
  }

  private async decide(
    ctx: RequestContext,
    orgId: string,
    requestId: string,
    action: "approve" | "reject" | "cancel",
    parse: () => { reason: string | null; minutes?: number },
  ): Promise<AccessRequestView> {
    // Approvers are the organization's admins and owners; anyone who may ask may cancel their own.
    // Tenancy before the body: an outsider learns nothing, not even which fields are wrong.
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, action === "cancel" ? "ssh.sign" : "principals.manage");
    const { reason, minutes } = parse();
    const id = parseId(requestId, AccessRequestErrors.notFound);
    const approver = can(access.membership.role, "principals.manage");
    const { clock, audit } = this.deps;
    const row = await this.deps.db.transaction(async (tx) => {
      // Locked: of twenty approvals at once, one decides and the others find it decided.
      const current = await repo.lock(tx, access.orgId, id);
      if (!current) throw AccessRequestErrors.notFound();
      const now = clock.now();
      checkDecision(current, current.userId === access.actor.userId, approver, action, now, minutes);
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
        metadata: { ...targetMeta(current), reason, ...(action === "approve" ? { minutes: granted, requested_minutes: current.requestedMinutes, grant_ends_at: updated.grantEndsAt!.toISOString() } : {}) },
      });
      if (action !== "cancel") await this.notifyRequester(tx, access, updated);
      return { updated, person: await repo.person(tx, current.userId) };
    });
    return toRequestView(row.updated, clock.now(), { email: row.person?.email ?? "", fullName: row.person?.fullName ?? null, organizationName: access.membership.organizationName });
  }

  /** Pending requests past their time become expired, each with its audit record (actor: the system). */
  private async lapse(db: Executor, now: Date, where: { orgIds?: string[]; userId?: string }): Promise<void> {
    const lapsed = await repo.lapse(db, now, where);
    for (const r of lapsed) {
      await this.deps.audit.record(db, systemContext(), AuditAction.accessExpired, {
        organizationId: r.organizationId,
        userId: r.userId,
        resourceType: "access_request",
        resourceId: r.id,
        metadata: { ...targetMeta(r), expired_at: r.expiresAt.toISOString() },
      });
    }
  }

  private async notifyApprovers(tx: Executor, access: OrgAccess, request: AccessRequestRow): Promise<void> {
    const reviewUrl = `${this.deps.config.appUrl}/orgs/${encodeURIComponent(access.membership.organizationSlug)}`;
    for (const a of await repo.approverContacts(tx, access.orgId)) {
      if (a.userId === request.userId) continue;
      await this.deps.email.enqueue(tx, "access-request", a.email, {
        approverName: a.fullName ?? a.email,
        requesterEmail: access.actor.email,
        principal: targetName(request),
        what: targetLabel(request),
        minutes: request.requestedMinutes,
        organizationName: access.membership.organizationName,
        reason: request.reason,
        reviewUrl,
      });
    }
  }

  private async notifyRequester(tx: Executor, access: OrgAccess, request: AccessRequestRow): Promise<void> {
    const person = await repo.person(tx, request.userId);
    if (!person) return;
    await this.deps.email.enqueue(tx, "access-request-decision", person.email, {
      name: person.fullName ?? person.email,
      principal: targetName(request),
      what: targetLabel(request),
      organizationName: access.membership.organizationName,
      decision: request.revokedAt ? `ended early, at ${request.revokedAt.toISOString()}` : request.state === "approved" ? `approved until ${request.grantEndsAt!.toISOString()}` : "rejected",
      reason: request.decisionReason ? `Reason: ${request.decisionReason}` : "",
    });
  }
}
