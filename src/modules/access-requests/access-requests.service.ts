import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { uniqueOr } from "../../infra/db-errors.js";
import { systemContext, type RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { EmailService } from "../email/index.js";
import { can, requireOrgAccess, requireStoredRole, requireUser } from "../access/index.js";
import { AccessRequestErrors } from "./access-requests.errors.js";
import { checkApprover, checkDecision, resolveTarget, targetMeta } from "./access-requests.rules.js";
import { notifyApprovers, notifyRequester, savePolicy } from "./access-requests.policies.js";
import { accessRequestsRepository as repo, type ActiveGrant } from "./access-requests.repository.js";
import {
  approveSchema,
  listRequestsSchema,
  rejectSchema,
  requestAccessSchema,
  revokeSchema,
  roleParamSchema,
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
  toRolePolicyView,
  type AccessPolicyView,
  type RoleAccessPolicyView,
  type AccessRequestView,
  type DepartmentAccessPolicyView,
} from "./access-requests.views.js";

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
            ...(target.kind === "principal"
              ? { principalId: target.id, principalName: target.name }
              : target.kind === "department"
                ? { departmentId: target.id, departmentName: target.name }
                : { requestedRole: target.name as "admin" | "member" }),
            state: automatic ? "approved" : "pending",
            reason: data.reason,
            requestedMinutes: minutes,
            expiresAt: new Date(now.getTime() + PENDING_TTL_MS),
            ...(automatic ? { decidedAt: now, grantedMinutes: minutes, grantStartsAt: now, grantEndsAt: new Date(now.getTime() + minutes * 60_000) } : {}),
            createdAt: now,
            updatedAt: now,
          });
          // A role request names the role kept on the membership next to the one asked for.
          const metadata = { [target.kind]: target.name, minutes, reason: data.reason, ...(target.kind === "role" ? { stored_role: access.membership.storedRole } : {}) };
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
            await notifyApprovers(this.deps, tx, access, created);
          }
          return created;
        }),
      {
        access_requests_user_principal_pending_uq: AccessRequestErrors.exists,
        access_requests_user_department_pending_uq: AccessRequestErrors.departmentExists,
        access_requests_user_role_pending_uq: AccessRequestErrors.roleExists,
      },
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
    // Where the caller decides, by the role kept on the membership (a temporary admin decides nothing).
    let approves: Array<{ id: string; role: string }>;
    if (orgId) {
      const access = await requireOrgAccess(this.deps.db, ctx, orgId, "principals.manage");
      requireStoredRole(access, "principals.manage", "decide access requests");
      approves = [{ id: access.orgId, role: access.membership.storedRole }];
    } else approves = await repo.approverOrgIds(this.deps.db, actor.userId);
    const orgIds = approves.map((a) => a.id);
    const owns = new Set(approves.filter((a) => a.role === "owner").map((a) => a.id));
    const now = this.deps.clock.now();
    await this.lapse(this.deps.db, now, { orgIds });
    return (await repo.ofOrganizations(this.deps.db, orgIds, "pending"))
      .filter((r) => r.request.userId !== actor.userId && (r.request.kind !== "role" || owns.has(r.request.organizationId)))
      .map((r) => toRequestView(r.request, now, r));
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
    const id = parseId(principalId, AccessRequestErrors.principalNotFound);
    const { row, target } = await savePolicy(
      this.deps,
      ctx,
      orgId,
      "principal",
      input,
      async (tx, access) => (await repo.principal(tx, access.orgId, { id })) ?? AccessRequestErrors.principalNotFound(),
      (tx, v, ref) => repo.upsertPolicy(tx, { ...v, principalId: ref }),
    );
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
    const id = parseId(departmentId, AccessRequestErrors.departmentNotFound);
    const { row, target } = await savePolicy(
      this.deps,
      ctx,
      orgId,
      "department",
      input,
      // Another organization's department is as unknown as a missing one.
      async (tx, access) => (await repo.department(tx, access.orgId, id)) ?? AccessRequestErrors.departmentNotFound(),
      (tx, v, ref) => repo.upsertDepartmentPolicy(tx, { ...v, departmentId: ref }),
    );
    return toDepartmentPolicyView(row, target.name);
  }

  /** An organization's role request policies (which roles can be asked for, by whom, how long). */
  async rolePolicies(ctx: RequestContext, orgId: string): Promise<RoleAccessPolicyView[]> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "principals.read");
    return (await repo.rolePolicies(this.deps.db, access.orgId)).map(toRolePolicyView);
  }

  /**
   * Owners: whether, by whom, for how long and with or without approval an organization role (admin;
   * never owner) may be asked for. While such a grant lasts the person's effective role is the
   * stronger one, less what a temporary role never confers (permissions.ts STORED_ROLE_ONLY).
   */
  async setRolePolicy(ctx: RequestContext, orgId: string, role: string, input: AccessPolicyInput): Promise<RoleAccessPolicyView> {
    const { row } = await savePolicy(
      this.deps,
      ctx,
      orgId,
      "role",
      input,
      async () => {
        const r = parseInput(roleParamSchema, role);
        return { id: r, name: r };
      },
      (tx, v, ref) => repo.upsertRolePolicy(tx, { ...v, role: ref as "admin" | "member" }),
    );
    return toRolePolicyView(row);
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
      if (current.userId !== access.actor.userId) await notifyRequester(this.deps, tx, access, updated);
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
      if (action !== "cancel") await notifyRequester(this.deps, tx, access, updated);
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
}
