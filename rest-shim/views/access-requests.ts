import { z } from "zod";
import type { Services } from "../../src/container.js";
import { accessRequestState } from "../../schema/access-requests.js";
import { date, type Item, named, type Returns, sameShape } from "./same-shape.js";

// --- just-in-time access requests and their policies ---
export const accessRequestView = named("AccessRequest", z.object({
  id: z.string(),
  organizationId: z.string(),
  organizationName: z.string().nullable(),
  userId: z.string(),
  userEmail: z.string().nullable(),
  userName: z.string().nullable(),
  kind: z.enum(["principal", "department", "role"]).describe("department: the department's principals, as if a member, while the grant lasts; role: an organization role (admin) while the grant lasts"),
  principalId: z.string().nullable(),
  principal: z.string().nullable().describe("The principal's name (kind principal)"),
  departmentId: z.string().nullable(),
  department: z.string().nullable().describe("The department's name (kind department)"),
  role: z.string().nullable().describe("The organization role asked for (kind role)"),
  state: z.enum(accessRequestState.enumValues).describe("expired: a pending request nobody decided in time"),
  reason: z.string(),
  requestedMinutes: z.number().int(),
  expiresAt: date.describe("When a pending request lapses"),
  decidedByUserId: z.string().nullable(),
  decisionReason: z.string().nullable(),
  decidedAt: date.nullable(),
  grantedMinutes: z.number().int().nullable(),
  grantStartsAt: date.nullable(),
  grantEndsAt: date.nullable().describe("Certificates that carry the principal through this grant end at this time at the latest"),
  revokedAt: date.nullable().describe("An approver ended the grant early (grantEndsAt is then that moment)"),
  revokedByUserId: z.string().nullable(),
  revokeReason: z.string().nullable(),
  active: z.boolean().describe("An approved request whose grant is in force now"),
  createdAt: date,
}));
sameShape<z.output<typeof accessRequestView>, Returns<Services["accessRequests"]["request"]>>();
sameShape<z.output<typeof accessRequestView>, Item<Returns<Services["accessRequests"]["mine"]>>>();

export const accessPolicyView = named("AccessRequestPolicy", z.object({
  organizationId: z.string(),
  principalId: z.string(),
  principal: z.string(),
  requestable: z.boolean(),
  requesterDepartmentId: z.string().nullable().describe("Only members of this department may ask (null: any member)"),
  maxDurationMinutes: z.number().int(),
  approvalRequired: z.boolean().describe("false: approved at once (on-call), audited like an approval"),
  updatedAt: date,
}));
sameShape<z.output<typeof accessPolicyView>, Returns<Services["accessRequests"]["setPolicy"]>>();

export const departmentAccessPolicyView = named("DepartmentAccessRequestPolicy", z.object({
  organizationId: z.string(),
  departmentId: z.string(),
  department: z.string(),
  requestable: z.boolean(),
  requesterDepartmentId: z.string().nullable().describe("Only members of this department may ask (null: any member)"),
  maxDurationMinutes: z.number().int(),
  approvalRequired: z.boolean().describe("false: approved at once (on-call), audited like an approval"),
  updatedAt: date,
}));
sameShape<z.output<typeof departmentAccessPolicyView>, Returns<Services["accessRequests"]["setDepartmentPolicy"]>>();

export const roleAccessPolicyView = named("RoleAccessRequestPolicy", z.object({
  organizationId: z.string(),
  role: z.string(),
  requestable: z.boolean(),
  requesterDepartmentId: z.string().nullable().describe("Only members of this department may ask (null: any member)"),
  maxDurationMinutes: z.number().int(),
  approvalRequired: z.boolean().describe("false: approved at once, audited like an approval"),
  updatedAt: date,
}));
sameShape<z.output<typeof roleAccessPolicyView>, Returns<Services["accessRequests"]["setRolePolicy"]>>();
