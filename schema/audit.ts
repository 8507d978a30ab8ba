import { boolean, index, jsonb, pgTable, text, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, id } from "./_columns.js";

/**
 * Append-only (a trigger in the migrations refuses UPDATE and DELETE). Written inside the
 * business transaction through audit.record(tx, ctx, action, details).
 */
export const auditLogs = pgTable(
  "audit_logs",
  {
    id: id(),
    createdAt: createdAt(),
    action: varchar("action", { length: 100 }).notNull(),
    /** Who acted (null for anonymous callers, e.g. a failed login for an unknown email). */
    actorId: uuid("actor_id"),
    /** Which user the event is about, when it is about one. */
    userId: uuid("user_id"),
    organizationId: uuid("organization_id"),
    resourceType: varchar("resource_type", { length: 64 }),
    resourceId: varchar("resource_id", { length: 255 }),
    success: boolean("success").notNull().default(true),
    ipAddress: varchar("ip_address", { length: 45 }),
    userAgent: text("user_agent"),
    requestId: varchar("request_id", { length: 128 }),
    metadata: jsonb("metadata").$type<Record<string, unknown>>().notNull().default({}),
    errorMessage: text("error_message"),
  },
  (t) => [
    index("audit_logs_user_idx").on(t.userId, t.createdAt),
    index("audit_logs_actor_idx").on(t.actorId, t.createdAt),
    // Organization activity: newest first with keyset pagination, optionally by user or action.
    // Ascending on purpose: scanned backwards it yields ORDER BY created_at DESC, id DESC exactly.
    index("audit_logs_org_idx").on(t.organizationId, t.createdAt, t.id),
    index("audit_logs_org_user_idx").on(t.organizationId, t.userId, t.createdAt, t.id),
    index("audit_logs_org_action_idx").on(t.organizationId, t.action, t.createdAt, t.id),
    index("audit_logs_action_idx").on(t.action, t.createdAt),
  ],
);
