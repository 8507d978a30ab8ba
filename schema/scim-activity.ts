import { index, integer, pgTable, text, uuid, varchar } from "drizzle-orm/pg-core";
import { tstz } from "./_columns.js";
import { apiKeys } from "./api-keys.js";
import { organizations } from "./orgs.js";

/**
 * What a SCIM client last did with one API key (issue 36: "admins see SCIM activity"): the last
 * request, the last successful write and the last error. One row per key, overwritten in place;
 * reads touch it at most once a minute per key (src/modules/scim/scim-activity.service.ts), writes
 * and errors always. The audit log keeps the history; this is the dashboard.
 */
export const scimActivity = pgTable(
  "scim_activity",
  {
    apiKeyId: uuid("api_key_id")
      .primaryKey()
      .references(() => apiKeys.id, { onDelete: "cascade" }),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    lastRequestAt: tstz("last_request_at").notNull(),
    /** "GET /Users": method and path (never the query: a filter names people). */
    lastRequest: varchar("last_request", { length: 255 }).notNull(),
    lastWriteAt: tstz("last_write_at"),
    /** "PATCH User 6f1c…": what the last successful write changed. */
    lastWrite: varchar("last_write", { length: 255 }),
    lastErrorAt: tstz("last_error_at"),
    lastErrorStatus: integer("last_error_status"),
    lastErrorScimType: varchar("last_error_scim_type", { length: 32 }),
    lastErrorDetail: text("last_error_detail"),
    lastErrorRequest: varchar("last_error_request", { length: 255 }),
  },
  (t) => [index("scim_activity_org_idx").on(t.organizationId)],
);
