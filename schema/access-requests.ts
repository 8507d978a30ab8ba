import { sql } from "drizzle-orm";
import { boolean, index, integer, pgEnum, pgTable, primaryKey, text, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, id, tstz, updatedAt } from "./_columns.js";
import { departments, organizations, principals } from "./orgs.js";
import { users } from "./users.js";

/**
 * Just-in-time access (issue 37): a member asks for a principal for a bounded time, an approver
 * decides, and an approved request is a grant that ends by itself (signing reads it by time).
 */
export const accessRequestState = pgEnum("access_request_state", ["pending", "approved", "rejected", "cancelled", "expired"]);

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
    requestable: boolean("requestable").notNull().default(true),
    /** Only members of this department may ask (null: any member of the organization). */
    requesterDepartmentId: uuid("requester_department_id").references(() => departments.id),
    maxMinutes: integer("max_minutes").notNull(),
    approvalRequired: boolean("approval_required").notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.principalId] })],
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
    principalId: uuid("principal_id")
      .notNull()
      .references(() => principals.id),
    /** The principal's name when asked (certificates carry the name). */
    principalName: varchar("principal_name", { length: 255 }).notNull(),
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
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // One open request per person and principal: a second one (or a concurrent one) is refused.
    uniqueIndex("access_requests_user_principal_pending_uq").on(t.userId, t.principalId).where(sql`${t.state} = 'pending'`),
    index("access_requests_org_state_idx").on(t.organizationId, t.state),
    index("access_requests_user_grant_idx").on(t.userId, t.organizationId, t.grantEndsAt),
  ],
);
