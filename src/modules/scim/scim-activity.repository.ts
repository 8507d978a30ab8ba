import { and, arrayContains, desc, eq, isNotNull, lte, or, sql } from "drizzle-orm";
import { apiKeys, scimActivity } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";

export interface ScimActivityWrite {
  apiKeyId: string;
  organizationId: string;
  at: Date;
  request: string;
  write?: string;
  error?: { status: number; scimType: string | null; detail: string };
}

export interface ScimKeyActivityRow {
  apiKeyId: string;
  name: string;
  prefix: string;
  scopes: string[];
  revokedAt: Date | null;
  lastRequestAt: Date | null;
  lastRequest: string | null;
  lastWriteAt: Date | null;
  lastWrite: string | null;
  lastErrorAt: Date | null;
  lastErrorStatus: number | null;
  lastErrorScimType: string | null;
  lastErrorDetail: string | null;
  lastErrorRequest: string | null;
}

/** One row per SCIM key: overwritten in place (an upsert), read per organization. */
export const scimActivityRepository = {
  async upsert(db: Executor, v: ScimActivityWrite): Promise<void> {
    const request = { lastRequestAt: v.at, lastRequest: v.request };
    const write = v.write ? { lastWriteAt: v.at, lastWrite: v.write } : {};
    const error = v.error
      ? { lastErrorAt: v.at, lastErrorStatus: v.error.status, lastErrorScimType: v.error.scimType, lastErrorDetail: v.error.detail, lastErrorRequest: v.request }
      : {};
    await db
      .insert(scimActivity)
      .values({ apiKeyId: v.apiKeyId, organizationId: v.organizationId, ...request, ...write, ...error })
      .onConflictDoUpdate({
        target: scimActivity.apiKeyId,
        set: { ...request, ...write, ...error },
        // Requests racing out of order never move the record back in time (lte maps the Date through
        // the column, as the PostgreSQL driver needs; a bare sql`${date}` parameter fails there).
        setWhere: lte(scimActivity.lastRequestAt, v.at),
      });
  },

  /**
   * The organization's SCIM keys (live keys holding the scim scope, and any key that has called
   * SCIM, revoked or not) with what each last did: one statement, whatever the organization's size.
   */
  listForOrganization: (db: Executor, organizationId: string): Promise<ScimKeyActivityRow[]> =>
    db
      .select({
        apiKeyId: apiKeys.id,
        name: apiKeys.name,
        prefix: apiKeys.prefix,
        scopes: apiKeys.scopes,
        revokedAt: apiKeys.revokedAt,
        lastRequestAt: scimActivity.lastRequestAt,
        lastRequest: scimActivity.lastRequest,
        lastWriteAt: scimActivity.lastWriteAt,
        lastWrite: scimActivity.lastWrite,
        lastErrorAt: scimActivity.lastErrorAt,
        lastErrorStatus: scimActivity.lastErrorStatus,
        lastErrorScimType: scimActivity.lastErrorScimType,
        lastErrorDetail: scimActivity.lastErrorDetail,
        lastErrorRequest: scimActivity.lastErrorRequest,
      })
      .from(apiKeys)
      .leftJoin(scimActivity, and(eq(scimActivity.apiKeyId, apiKeys.id), eq(scimActivity.organizationId, organizationId)))
      .where(and(eq(apiKeys.organizationId, organizationId), live(apiKeys), or(isNotNull(scimActivity.apiKeyId), and(arrayContains(apiKeys.scopes, ["scim"]), sql`${apiKeys.revokedAt} is null`))))
      .orderBy(sql`${scimActivity.lastRequestAt} desc nulls last`, desc(apiKeys.createdAt))
      .limit(200),
};
