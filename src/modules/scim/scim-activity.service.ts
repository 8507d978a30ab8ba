import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { requireOrgAccess } from "../access/index.js";
import { scimActivityRepository, type ScimKeyActivityRow } from "./scim-activity.repository.js";

/** A successful read touches a key's activity at most this often (writes and errors always do). */
export const SCIM_READ_TOUCH_SECONDS = 60;

/** One SCIM request as the /scim/v2 door saw it, once answered. */
export interface ScimRequestEvent {
  organizationId: string;
  apiKeyId: string;
  method: string;
  /** The path under /scim/v2 ("/Users/6f1c…"), never the query. */
  path: string;
  status: number;
  /** The Location of a 201 (what a POST created). */
  location?: string;
  /** What the SCIM error body said, for a status of 400 and up. */
  error?: { scimType?: string; detail: string };
}

export interface ScimErrorView {
  at: Date;
  status: number;
  scimType: string | null;
  detail: string;
  /** "PATCH /Users/6f1c…" */
  request: string;
}

export interface ScimKeyActivityView {
  apiKeyId: string;
  name: string;
  prefix: string;
  /** The key holds the scim scope (a key without it that called SCIM is listed with its refusal). */
  hasScimScope: boolean;
  revokedAt: Date | null;
  lastRequestAt: Date | null;
  lastRequest: string | null;
  lastWriteAt: Date | null;
  lastWrite: string | null;
  lastError: ScimErrorView | null;
}

export interface ScimActivityView {
  organizationId: string;
  /** The SCIM base URL to paste into the identity provider (one for every organization; the key decides which). */
  baseUrl: string;
  /** The last SCIM request of any of the organization's keys (the last sync). */
  lastRequestAt: Date | null;
  lastWriteAt: Date | null;
  lastWrite: string | null;
  lastError: ScimErrorView | null;
  keys: ScimKeyActivityView[];
}

const clean = (s: string, max: number): string => s.replace(/[\u0000-\u001f\u007f]/g, "?").slice(0, max);
const RESOURCE: Record<string, string> = { Users: "User", Groups: "Group" };

/**
 * What a request was ("GET /Users") and, for a successful write, what it changed ("PATCH User
 * 6f1c…", "POST User <the new id>"). Pure; the door's paths only.
 */
export function describeScimRequest(e: Pick<ScimRequestEvent, "method" | "path" | "status" | "location">): { request: string; write?: string } {
  const method = clean(e.method.toUpperCase(), 10);
  const request = `${method} ${clean(e.path, 200)}`;
  if (method === "GET" || method === "HEAD" || e.status >= 400) return { request };
  const [, collection = "", id] = e.path.split("/");
  const type = RESOURCE[collection];
  if (!type) return { request };
  const target = id ?? e.location?.split("/").pop();
  return { request, write: clean(`${method} ${type}${target ? ` ${target}` : ""}`, 255) };
}

const errorOf = (r: ScimKeyActivityRow): ScimErrorView | null =>
  r.lastErrorAt && r.lastErrorStatus !== null
    ? { at: r.lastErrorAt, status: r.lastErrorStatus, scimType: r.lastErrorScimType, detail: r.lastErrorDetail ?? "", request: r.lastErrorRequest ?? "" }
    : null;

const latest = <T>(items: T[], at: (t: T) => Date | null | undefined): T | undefined =>
  items.reduce<T | undefined>((best, t) => {
    const a = at(t);
    return a && (!best || a > at(best)!) ? t : best;
  }, undefined);

/**
 * SCIM activity (issue 36): what each of an organization's SCIM keys last did — the last request
 * (the last sync), the last successful write and the last error — for its admins. Cheap by design:
 * a successful read writes at most once a minute per key and instance; writes and errors always.
 */
export class ScimActivityService {
  /** When each key's read was last stored (this instance). */
  private readonly touched = new Map<string, number>();

  constructor(private readonly deps: { db: Db; clock: Clock; baseUrl: string }) {}

  /** Records one answered SCIM request (the door calls it; it is not an operation of any caller). */
  async record(e: ScimRequestEvent): Promise<void> {
    const now = this.deps.clock.now();
    const { request, write } = describeScimRequest(e);
    const failed = e.status >= 400;
    if (!failed && !write) {
      const last = this.touched.get(e.apiKeyId);
      if (last !== undefined && now.getTime() - last < SCIM_READ_TOUCH_SECONDS * 1000) return;
    }
    // Bounded: forgetting only costs one extra write per key.
    if (this.touched.size > 10_000) this.touched.clear();
    this.touched.set(e.apiKeyId, now.getTime());
    await scimActivityRepository.upsert(this.deps.db, {
      apiKeyId: e.apiKeyId,
      organizationId: e.organizationId,
      at: now,
      request,
      ...(write ? { write } : {}),
      ...(failed ? { error: { status: e.status, scimType: e.error?.scimType ?? null, detail: clean(e.error?.detail ?? "", 500) } } : {}),
    });
  }

  /** The organization's SCIM activity, for its admins (members, keys and other organizations refused). */
  async forOrganization(ctx: RequestContext, orgId: string): Promise<ScimActivityView> {
    const { orgId: id } = await requireOrgAccess(this.deps.db, ctx, orgId, "activity.read");
    const rows = await scimActivityRepository.listForOrganization(this.deps.db, id);
    const keys: ScimKeyActivityView[] = rows.map((r) => ({
      apiKeyId: r.apiKeyId,
      name: r.name,
      prefix: r.prefix,
      hasScimScope: r.scopes.includes("scim"),
      revokedAt: r.revokedAt,
      lastRequestAt: r.lastRequestAt,
      lastRequest: r.lastRequest,
      lastWriteAt: r.lastWriteAt,
      lastWrite: r.lastWrite,
      lastError: errorOf(r),
    }));
    const lastWrite = latest(keys, (k) => k.lastWriteAt);
    return {
      organizationId: id,
      baseUrl: this.deps.baseUrl,
      lastRequestAt: latest(keys, (k) => k.lastRequestAt)?.lastRequestAt ?? null,
      lastWriteAt: lastWrite?.lastWriteAt ?? null,
      lastWrite: lastWrite?.lastWrite ?? null,
      lastError: latest(keys, (k) => k.lastError?.at)?.lastError ?? null,
      keys,
    };
  }
}
