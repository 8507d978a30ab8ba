/**
 * The operators' screens that keep their place in the address (so Back returns to the same list,
 * and other screens can link to a filtered one). Loaded with the router: kept tiny, no screen code.
 */
export const SHOWS = ["superadmins", "suspended", "deleted"] as const;
export type Show = (typeof SHOWS)[number];

export interface AccountsSearch {
  q?: string;
  show?: Show;
  page?: number;
}

export const validateAccountsSearch = (s: Record<string, unknown>): AccountsSearch => ({
  q: typeof s.q === "string" && s.q.trim() ? s.q.trim().slice(0, 320) : undefined,
  show: SHOWS.find((v) => v === s.show),
  page: Number.isInteger(Number(s.page)) && Number(s.page) > 1 ? Number(s.page) : undefined,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An account to start from: the audit log filtered to it, the kill switch with it chosen. */
export interface AccountSearch {
  userId?: string;
}

export const validateAccountSearch = (s: Record<string, unknown>): AccountSearch => ({
  userId: typeof s.userId === "string" && UUID.test(s.userId) ? s.userId : undefined,
});
