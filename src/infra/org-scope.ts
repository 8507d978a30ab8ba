import { and, eq, type Column, type SQL } from "drizzle-orm";

/**
 * The by-id filter of every organization-scoped table: this id, in this organization. Another
 * tenant's id matches nothing, so the service reports it as not found (rule 2).
 */
export const idInOrg = (table: { id: Column; organizationId: Column }, orgId: string, id: string): SQL => and(eq(table.id, id), eq(table.organizationId, orgId))!;
