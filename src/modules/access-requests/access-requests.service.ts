import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { uniqueOr } from "../../infra/db-errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { EmailService } from "../email/index.js";
import { requireOrgAccess } from "../access/index.js";
import { AccessRequestErrors } from "./access-requests.errors.js";
import { listMine, listOrganization, listPending } from "./access-requests.queries.js";
import { decideRequest, lapsePending, revokeGrant } from "./access-requests.decisions.js";
import { resolveTarget } from "./access-requests.rules.js";
import { notifyApprovers, savePolicy } from "./access-requests.policies.js";
import { accessRequestsRepository as repo, type ActiveGrant } from "./access-requests.repository.js";
import {
  approveSchema,
  rejectSchema,
  requestAccessSchema,
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
 * An approved request is a grant signing reads by time: it ends by itself. The decisions and early
 * ends are in access-requests.decisions.ts, the request lists in access-requests.queries.ts.
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
          await lapsePending(this.deps, tx, now, { orgIds: [access.orgId], userId: access.actor.userId });
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
  mine(ctx: RequestContext): Promise<AccessRequestView[]> {
    return listMine(this.deps, ctx);
  }

  /** An organization's requests (admins and owners): everyone's, optionally in one state. */
  list(ctx: RequestContext, orgId: string, query: ListRequestsInput = {}): Promise<AccessRequestView[]> {
    return listOrganization(this.deps, ctx, orgId, query);
  }

  /** Requests waiting for the caller's decision, never their own (access-requests.queries.ts). */
  pending(ctx: RequestContext, orgId?: string | null): Promise<AccessRequestView[]> {
    return listPending(this.deps, ctx, orgId);
  }

  async approve(ctx: RequestContext, orgId: string, requestId: string, input: ApproveInput = {}): Promise<AccessRequestView> {
    return decideRequest(this.deps, ctx, orgId, requestId, "approve", () => {
      const data = parseInput(approveSchema, input ?? {});
      return { reason: data.reason ?? null, minutes: data.minutes };
    });
  }

  async reject(ctx: RequestContext, orgId: string, requestId: string, input: RejectInput): Promise<AccessRequestView> {
    return decideRequest(this.deps, ctx, orgId, requestId, "reject", () => ({ reason: parseInput(rejectSchema, input ?? {}).reason }));
  }

  /** The requester withdraws a pending request. */
  async cancel(ctx: RequestContext, orgId: string, requestId: string): Promise<AccessRequestView> {
    return decideRequest(this.deps, ctx, orgId, requestId, "cancel", () => ({ reason: null }));
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

  /** An approver ends a grant in force early, with a reason (access-requests.decisions.ts). */
  revoke(ctx: RequestContext, orgId: string, requestId: string, input: RevokeInput): Promise<AccessRequestView> {
    return revokeGrant(this.deps, ctx, orgId, requestId, input);
  }

  /** The port signing asks: the person's grants in force in the organization at `at`. */
  activeGrants(userId: string, orgId: string, at: Date): Promise<ActiveGrant[]> {
    return repo.activeGrants(this.deps.db, userId, orgId, at);
  }
}
