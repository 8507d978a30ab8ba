import { sql } from "drizzle-orm";
import { boolean, check, index, integer, pgEnum, pgTable, primaryKey, text, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, id, tstz, updatedAt } from "./_columns.js";
import { departments, organizations, orgRole, principals } from "./orgs.js";
import { users } from "./users.js";

/**
 * Just-in-time access (issue 37): a member asks for a principal for a bounded time, an approver
 * decides, and an approved request is a grant that ends by itself (signing reads it by time).
 */
export const accessRequestState = pgEnum("access_request_state", ["pending", "approved", "rejected", "cancelled", "expired"]);

/**
 * What every request policy says (principal, department, role): whether it can be asked for, by
 * whom (only members of a department; null: any member), for how long at most, and whether someone
 * approves. Here rather than in _columns.ts: it references departments, and orgs.ts imports _columns.
 */
const policyColumns = () => ({
  requestable: boolean("requestable").notNull().default(true),
  requesterDepartmentId: uuid("requester_department_id").references(() => departments.id),
  maxMinutes: integer("max_minutes").notNull(),
  approvalRequired: boolean("approval_required").notNull().default(true),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/** Whether, by whom and for how long a principal may be asked for. No row: not requestable. */
export const accessRequestPolicies = pgTable(
  "access_request_policies",
  {
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    principalId: uuid("principal_id")
      .notNull()
      .references(() => principals.id),
    ...policyColumns(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.principalId] })],
);

/**
 * Whether, by whom and for how long a department's grants may be asked for: while such a grant
 * lasts the person signs with the department's principals, as if a member (nothing else of
 * membership: see docs/access-requests.md). No row: not requestable.
 */
export const departmentAccessPolicies = pgTable(
  "department_access_policies",
  {
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    departmentId: uuid("department_id")
      .notNull()
      .references(() => departments.id),
    ...policyColumns(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.departmentId] })],
);

/**
 * Whether, by whom and for how long an organization role may be asked for (`admin` for 2h): one
 * row per organization and role; never `owner` (its uniqueness rules must not count a temporary
 * one). No row: not requestable. Only owners set it, and only owners approve such requests.
 */
export const roleAccessPolicies = pgTable(
  "role_access_policies",
  {
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    role: orgRole("role").notNull(),
    ...policyColumns(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.role] }), check("role_access_policies_role_ck", sql`${t.role} in ('admin', 'member')`)],
);

export const accessRequests = pgTable(
  "access_requests",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    /** What is asked for: a principal, or a department's grants (its principals, as if a member). */
    kind: varchar("kind", { length: 16 }).$type<"principal" | "department" | "role">().notNull().default("principal"),
    principalId: uuid("principal_id").references(() => principals.id),
    /** The principal's name when asked (certificates carry the name). */
    principalName: varchar("principal_name", { length: 255 }),
    departmentId: uuid("department_id").references(() => departments.id),
    /** The department's name when asked. */
    departmentName: varchar("department_name", { length: 255 }),
    /**
     * kind `role`: the organization role asked for (above the person's stored role, never owner).
     * While the grant is in force the effective role is the stronger of the two (effective_org_role).
     */
    requestedRole: orgRole("requested_role"),
    state: accessRequestState("state").notNull(),
    reason: text("reason").notNull(),
    requestedMinutes: integer("requested_minutes").notNull(),
    /** A pending request lapses at this time. */
    expiresAt: tstz("expires_at").notNull(),
    decidedByUserId: uuid("decided_by_user_id").references(() => users.id),
    decisionReason: text("decision_reason"),
    decidedAt: tstz("decided_at"),
    /** The grant (approved requests): from the decision, for at most the requested time. */
    grantedMinutes: integer("granted_minutes"),
    grantStartsAt: tstz("grant_starts_at"),
    grantEndsAt: tstz("grant_ends_at"),
    /** An approver ended the grant early: grantEndsAt was moved to this time. */
    revokedAt: tstz("revoked_at"),
    revokedByUserId: uuid("revoked_by_user_id").references(() => users.id),
    revokeReason: text("revoke_reason"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // One open request per person and principal: a second one (or a concurrent one) is refused.
    uniqueIndex("access_requests_user_principal_pending_uq").on(t.userId, t.principalId).where(sql`${t.state} = 'pending'`),
    uniqueIndex("access_requests_user_department_pending_uq").on(t.userId, t.departmentId).where(sql`${t.state} = 'pending'`),
    uniqueIndex("access_requests_user_role_pending_uq").on(t.userId, t.organizationId).where(sql`${t.state} = 'pending' and ${t.kind} = 'role'`),
    // Exactly one target, matching the kind.
    check(
      "access_requests_target_ck",
      sql`(${t.kind} = 'principal' and ${t.principalId} is not null and ${t.principalName} is not null and ${t.departmentId} is null and ${t.requestedRole} is null) or (${t.kind} = 'department' and ${t.departmentId} is not null and ${t.departmentName} is not null and ${t.principalId} is null and ${t.requestedRole} is null) or (${t.kind} = 'role' and ${t.requestedRole} in ('admin', 'member') and ${t.principalId} is null and ${t.departmentId} is null)`,
    ),
    index("access_requests_org_state_idx").on(t.organizationId, t.state),
    index("access_requests_user_grant_idx").on(t.userId, t.organizationId, t.grantEndsAt),
  ],
);
