import type { AccessPolicyRow, AccessRequestListed, AccessRequestRow, DepartmentPolicyRow, RolePolicyRow } from "./access-requests.repository.js";

export interface AccessRequestView {
  id: string;
  organizationId: string;
  organizationName: string | null;
  userId: string;
  userEmail: string | null;
  userName: string | null;
  /** principal, or department (its principals, as if a member, while the grant lasts). */
  kind: "principal" | "department" | "role";
  principalId: string | null;
  principal: string | null;
  departmentId: string | null;
  department: string | null;
  /** kind role: the organization role asked for (admin), held while the grant lasts. */
  role: string | null;
  state: AccessRequestRow["state"];
  reason: string;
  requestedMinutes: number;
  expiresAt: Date;
  decidedByUserId: string | null;
  decisionReason: string | null;
  decidedAt: Date | null;
  grantedMinutes: number | null;
  grantStartsAt: Date | null;
  grantEndsAt: Date | null;
  /** An approver ended the grant early (grantEndsAt is then that moment). */
  revokedAt: Date | null;
  revokedByUserId: string | null;
  revokeReason: string | null;
  /** An approved request whose grant is in force now. */
  active: boolean;
  createdAt: Date;
}

export function toRequestView(r: AccessRequestRow, now: Date, who?: Omit<AccessRequestListed, "request">): AccessRequestView {
  // A pending request past its time reads as expired even before a write marks it so.
  const state = r.state === "pending" && r.expiresAt <= now ? "expired" : r.state;
  return {
    id: r.id,
    organizationId: r.organizationId,
    organizationName: who?.organizationName ?? null,
    userId: r.userId,
    userEmail: who?.email ?? null,
    userName: who?.fullName ?? null,
    kind: r.kind,
    principalId: r.principalId,
    principal: r.principalName,
    departmentId: r.departmentId,
    department: r.departmentName,
    role: r.requestedRole,
    state,
    reason: r.reason,
    requestedMinutes: r.requestedMinutes,
    expiresAt: r.expiresAt,
    decidedByUserId: r.decidedByUserId,
    decisionReason: r.decisionReason,
    decidedAt: r.decidedAt,
    grantedMinutes: r.grantedMinutes,
    grantStartsAt: r.grantStartsAt,
    grantEndsAt: r.grantEndsAt,
    revokedAt: r.revokedAt,
    revokedByUserId: r.revokedByUserId,
    revokeReason: r.revokeReason,
    active: state === "approved" && !!r.grantStartsAt && !!r.grantEndsAt && r.grantStartsAt <= now && r.grantEndsAt > now,
    createdAt: r.createdAt,
  };
}

export interface AccessPolicyView {
  organizationId: string;
  principalId: string;
  principal: string;
  requestable: boolean;
  requesterDepartmentId: string | null;
  maxDurationMinutes: number;
  approvalRequired: boolean;
  updatedAt: Date;
}

export const toPolicyView = (p: AccessPolicyRow, principal: string): AccessPolicyView => ({
  organizationId: p.organizationId,
  principalId: p.principalId,
  principal,
  requestable: p.requestable,
  requesterDepartmentId: p.requesterDepartmentId,
  maxDurationMinutes: p.maxMinutes,
  approvalRequired: p.approvalRequired,
  updatedAt: p.updatedAt,
});

export interface DepartmentAccessPolicyView {
  organizationId: string;
  departmentId: string;
  department: string;
  requestable: boolean;
  requesterDepartmentId: string | null;
  maxDurationMinutes: number;
  approvalRequired: boolean;
  updatedAt: Date;
}

export const toDepartmentPolicyView = (p: DepartmentPolicyRow, department: string): DepartmentAccessPolicyView => ({
  organizationId: p.organizationId,
  departmentId: p.departmentId,
  department,
  requestable: p.requestable,
  requesterDepartmentId: p.requesterDepartmentId,
  maxDurationMinutes: p.maxMinutes,
  approvalRequired: p.approvalRequired,
  updatedAt: p.updatedAt,
});

export interface RoleAccessPolicyView {
  organizationId: string;
  role: string;
  requestable: boolean;
  requesterDepartmentId: string | null;
  maxDurationMinutes: number;
  approvalRequired: boolean;
  updatedAt: Date;
}

export const toRolePolicyView = (p: RolePolicyRow): RoleAccessPolicyView => ({
  organizationId: p.organizationId,
  role: p.role,
  requestable: p.requestable,
  requesterDepartmentId: p.requesterDepartmentId,
  maxDurationMinutes: p.maxMinutes,
  approvalRequired: p.approvalRequired,
  updatedAt: p.updatedAt,
});
