import { isNull, type Column } from "drizzle-orm";

/** The one soft-delete filter: every query on a soft-deletable table goes through it. */
export const live = (table: { deletedAt: Column }) => isNull(table.deletedAt);
