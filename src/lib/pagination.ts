import { z } from "zod";

/** Page-based pagination as in the original API: per_page defaults to 50 and is capped at 200. */
export const paginationSchema = z.object({
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  perPage: z.coerce.number().int().min(1).max(200).default(50),
});

/**
 * A time range over a log: `since` (inclusive) and `until` (exclusive), instants with a zone. A query
 * string gives text; GraphQL's DateTimeISO scalar a Date already.
 */
const instant = () => z.union([z.date(), z.iso.datetime({ offset: true, error: "must be an ISO 8601 instant with a zone, e.g. 2026-11-27T00:00:00Z" }).transform((v) => new Date(v))]);
export const timeRange = { since: instant().optional(), until: instant().optional() };

export interface Page<T> {
  items: T[];
  count: number;
  page: number;
  perPage: number;
  pages: number;
}

export const toPage = <T>(items: T[], total: number, page: number, perPage: number): Page<T> => ({
  items,
  count: total,
  page,
  perPage,
  pages: Math.max(1, Math.ceil(total / perPage)),
});
