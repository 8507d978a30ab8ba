import { z } from "zod";
import { paginationSchema, timeRange } from "../../lib/pagination.js";

/** Who, what, and when. */
const activityFilter = {
  userId: z.uuid().optional(),
  action: z.string().trim().min(1).max(100).optional(),
  ...timeRange,
};

export const activitySchema = z.object({
  ...activityFilter,
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional(),
});
export type ActivityInput = z.input<typeof activitySchema>;

/**
 * The original API's numbered pages (?page=&per_page=) over the same records: a script written
 * against it keeps paging instead of silently getting page 1 again. Not mixed with the cursor.
 */
export const activityPageSchema = paginationSchema.extend({
  ...activityFilter,
  cursor: z.undefined({ error: "pages are numbered (page, per_page) or follow a cursor (limit, cursor), not both" }).optional(),
  limit: z.undefined({ error: "pages are numbered (page, per_page) or follow a cursor (limit, cursor), not both" }).optional(),
});
export type ActivityPageInput = z.input<typeof activityPageSchema>;

/** GET /audit-logs, the system log: the original API's filters, on numbered pages. */
export const systemAuditQuerySchema = paginationSchema.extend({
  ...activityFilter,
  resourceType: z.string().trim().min(1).max(64).optional(),
  // A query string says "true" or "false" (z.coerce.boolean would read "false" as true); GraphQL a boolean.
  success: z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")]).optional(),
  q: z.string().trim().min(1).max(200).optional(),
});
export type SystemAuditQueryInput = z.input<typeof systemAuditQuerySchema>;
