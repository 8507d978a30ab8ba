import type { Executor } from "../../infra/db.js";
import { requireStoredRole, roleRank, type OrgAccess } from "../access/index.js";
import { AccessRequestErrors } from "./access-requests.errors.js";
import { accessRequestsRepository as repo, type AccessRequestRow } from "./access-requests.repository.js";

// What a request is for, and who may take which step on it: the rules the service applies.

type PolicyFields = { requestable: boolean; requesterDepartmentId: string | null; maxMinutes: number; approvalRequired: boolean };
type Target = { kind: "principal" | "department" | "role"; id: string; name: string; policy: PolicyFields };

/** How a request names what it is for, in audit records, emails and messages. */
export const targetLabel = (r: AccessRequestRow): string =>
  r.kind === "role" ? `the organization role ${r.requestedRole}` : r.kind === "department" ? `the department ${r.departmentName}'s principals` : `the principal ${r.principalName}`;
/** The short name (email subjects). */
export const targetName = (r: AccessRequestRow): string => (r.kind === "role" ? `role ${r.requestedRole}` : r.kind === "department" ? `department ${r.departmentName}` : r.principalName!);
export const targetMeta = (r: AccessRequestRow) => (r.kind === "role" ? { role: r.requestedRole } : r.kind === "department" ? { department: r.departmentName } : { principal: r.principalName });

/**
 * Who approves or rejects a request, beyond rule 20 (checkDecision): an approver by the *stored*
 * role (a temporary admin decides nothing, their own elevation included), and for a role an owner.
 */
export function checkApprover(access: OrgAccess, r: AccessRequestRow): void {
  requireStoredRole(access, "principals.manage", "decide access requests");
  if (r.kind === "role" && access.membership.storedRole !== "owner") throw AccessRequestErrors.ownersOnly("approve or reject a request for an organization role");
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Who may take this step on this request now; the first rule broken is the answer. */
export function checkDecision(current: AccessRequestRow, own: boolean, approver: boolean, action: "approve" | "reject" | "cancel", now: Date, minutes?: number): void {
  // A plain member learns nothing about others' requests.
  if (!own && !approver) throw AccessRequestErrors.notFound();
  if (action === "cancel" && !own) throw AccessRequestErrors.notRequester();
  // Nobody decides their own request (rule 20), whatever their role.
  if (action !== "cancel" && own) throw AccessRequestErrors.ownRequest();
  if (current.state !== "pending") throw AccessRequestErrors.decided(current.state);
  if (current.expiresAt <= now) throw AccessRequestErrors.expired();
  if (minutes !== undefined && minutes > current.requestedMinutes) throw AccessRequestErrors.longerThanAsked(current.requestedMinutes);
}

/**
 * What is asked for, with its policy, after the policy's refusals: a principal (its own policy)
 * or a department's grants (the department's policy). The first rule broken is the answer.
 */
export async function resolveTarget(db: Executor, access: OrgAccess, data: { principal?: string; department?: string; role?: string; minutes: number }): Promise<Target> {
  let target: Target;
  if (data.role !== undefined) {
    target = await resolveRole(db, access, data.role);
  } else if (data.principal !== undefined) {
    const principal = await repo.principal(db, access.orgId, UUID.test(data.principal) ? { id: data.principal } : { name: data.principal });
    if (!principal) throw AccessRequestErrors.principalNotFound();
    const policy = await repo.policy(db, access.orgId, principal.id);
    if (!policy || !policy.requestable) throw AccessRequestErrors.notRequestable(principal.name);
    target = { kind: "principal", ...principal, policy };
  } else {
    const ref = data.department ?? "";
    const department = await repo.departmentRef(db, access.orgId, UUID.test(ref) ? { id: ref } : { name: ref });
    if (!department) throw AccessRequestErrors.departmentNotFound();
    const policy = await repo.departmentPolicy(db, access.orgId, department.id);
    if (!policy || !policy.requestable) throw AccessRequestErrors.departmentNotRequestable(department.name);
    target = { kind: "department", ...department, policy };
  }
  const { policy } = target;
  if (policy.requesterDepartmentId && !(await repo.inDepartment(db, access.actor.userId, policy.requesterDepartmentId))) {
    const dept = (await repo.department(db, access.orgId, policy.requesterDepartmentId))?.name ?? "(removed)";
    throw target.kind === "principal"
      ? AccessRequestErrors.notRequestableByYou(target.name, dept)
      : target.kind === "role"
        ? AccessRequestErrors.roleNotRequestableByYou(target.name, dept)
        : AccessRequestErrors.departmentNotRequestableByYou(target.name, dept);
  }
  if (data.minutes > policy.maxMinutes) throw AccessRequestErrors.tooLong(policy.maxMinutes, target.kind);
  return target;
}

/** An organization role asked for, with its policy: never owner, only above the stored role, requestable. */
async function resolveRole(db: Executor, access: OrgAccess, asked: string): Promise<Target> {
  const role = asked as "owner" | "admin" | "member" | "guest";
  // Never owner: the sole-owner rules and ownership transfer must not count a temporary one.
  if (role === "owner") throw AccessRequestErrors.roleNeverRequestable();
  // Only a role above the one kept on the membership (a grant in force does not count).
  if (roleRank(role) <= roleRank(access.membership.storedRole)) throw AccessRequestErrors.roleNotAbove(role, access.membership.storedRole);
  const policy = await repo.rolePolicy(db, access.orgId, role as "admin" | "member");
  if (!policy || !policy.requestable) throw AccessRequestErrors.roleNotRequestable(role);
  return { kind: "role", id: role, name: role, policy };
}
