import type { Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/index.js";
import { AccessErrors, requireOrgAccess, requireStoredRole, type OrgAccess } from "../access/index.js";
import { AccessRequestErrors } from "./access-requests.errors.js";
import { accessRequestsRepository as repo, type AccessRequestRow } from "./access-requests.repository.js";
import { targetLabel, targetName } from "./access-requests.rules.js";
import { accessPolicySchema, type AccessPolicyInput } from "./access-requests.schemas.js";
import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { AuditService } from "../audit/index.js";
import type { EmailService } from "../email/index.js";

// The request policies' one write path, and who is told of a request and its decision.

/** What these need of the service's dependencies (AccessRequestsDeps). */
interface Deps {
  db: Db;
  clock: Clock;
  audit: AuditService;
  email: EmailService;
  config: { appUrl: string };
}

/** What every request policy holds (principal, department, role). */
export type PolicyFields = { requestable: boolean; requesterDepartmentId: string | null; maxMinutes: number; approvalRequired: boolean };

/**
 * The one path that sets a request policy, whatever it is for: tenancy, the body, the target (another
 * organization's is as unknown as a missing one), the requesters' department, the upsert and its
 * audit record, in one transaction.
 */
export async function savePolicy<R extends PolicyFields>(
  deps: Pick<Deps, "db" | "clock" | "audit">,
  ctx: RequestContext,
  orgId: string,
  kind: "principal" | "department" | "role",
  input: AccessPolicyInput,
  target: (tx: Executor, access: OrgAccess) => Promise<{ id: string; name: string } | Error>,
  upsert: (tx: Executor, fields: PolicyFields & { organizationId: string; createdAt: Date; updatedAt: Date }, targetId: string) => Promise<R>,
) {
  const access = await requireOrgAccess(deps.db, ctx, orgId, "principals.manage");
  // Who may ask for what is decided by the role kept on the membership, never a temporary one;
  // what an organization role lends, by its owners alone.
  requireStoredRole(access, "principals.manage", "set access request policies");
  if (kind === "role" && access.membership.storedRole !== "owner") throw AccessErrors.roleForbids("decide who may ask for an organization role (owners do)");
  const data = parseInput(accessPolicySchema, input ?? {});
  return deps.db.transaction(async (tx) => {
    const found = await target(tx, access);
    if (found instanceof Error) throw found;
    if (data.requesterDepartmentId && !(await repo.department(tx, access.orgId, data.requesterDepartmentId))) {
      throw AccessRequestErrors.departmentNotFound();
    }
    const now = deps.clock.now();
    const fields = {
      organizationId: access.orgId,
      requestable: data.requestable,
      requesterDepartmentId: data.requesterDepartmentId ?? null,
      maxMinutes: data.maxDurationMinutes,
      approvalRequired: data.approvalRequired,
      createdAt: now,
      updatedAt: now,
    };
    const row = await upsert(tx, fields, found.id);
    await deps.audit.record(tx, ctx, AuditAction.accessPolicySet, {
      organizationId: access.orgId,
      resourceType: kind,
      resourceId: kind === "role" ? undefined : found.id,
      metadata: { [kind]: found.name, requestable: row.requestable, requester_department_id: row.requesterDepartmentId, max_minutes: row.maxMinutes, approval_required: row.approvalRequired },
    });
    return { row, target: found };
  });
}

export async function notifyApprovers(deps: Pick<Deps, "email" | "config">, tx: Executor, access: OrgAccess, request: AccessRequestRow): Promise<void> {
  const reviewUrl = `${deps.config.appUrl}/orgs/${encodeURIComponent(access.membership.organizationSlug)}`;
  for (const a of await repo.approverContacts(tx, access.orgId, request.kind === "role")) {
    if (a.userId === request.userId) continue;
    await deps.email.enqueue(tx, "access-request", a.email, {
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

export async function notifyRequester(deps: Pick<Deps, "email">, tx: Executor, access: OrgAccess, request: AccessRequestRow): Promise<void> {
  const person = await repo.person(tx, request.userId);
  if (!person) return;
  await deps.email.enqueue(tx, "access-request-decision", person.email, {
    name: person.fullName ?? person.email,
    principal: targetName(request),
    what: targetLabel(request),
    organizationName: access.membership.organizationName,
    decision: request.revokedAt ? `ended early, at ${request.revokedAt.toISOString()}` : request.state === "approved" ? `approved until ${request.grantEndsAt!.toISOString()}` : "rejected",
    reason: request.decisionReason ? `Reason: ${request.decisionReason}` : "",
  });
}
