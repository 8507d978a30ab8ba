import { and, eq, gt, isNotNull, isNull, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { oidcPayloads, oidcRefreshTokens, users } from "../../../schema/index.js";
import type { Db } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";

export interface OidcAccountRow {
  userId: string;
  email: string;
  verifiedAt: Date | null;
  name: string | null;
  updatedAt: Date;
}

/**
 * The people the provider may issue tokens for: active, not deleted users, with only the columns
 * their claims need (no credential). Read on every token the provider issues: prepared once.
 */
export function prepareActiveAccount(db: Db): { execute(v: { id: string }): Promise<OidcAccountRow[]> } {
  return db
    .select({ userId: users.id, email: users.email, verifiedAt: users.emailVerifiedAt, name: users.fullName, updatedAt: users.updatedAt })
    .from(users)
    .where(and(eq(users.id, sql.placeholder("id")), eq(users.status, "active"), live(users)))
    .prepare("oidc_account_find");
}

/** A refresh token's row with its grant's and its account's, as one statement reads them. */
export interface RefreshContextRow {
  payload: Record<string, unknown>;
  consumedAt: Date | null;
  /** The grant's row key (SHA-256 of the grant id) when the token names a grant. */
  grantKey: string | null;
  grantFound: boolean;
  grantPayload: Record<string, unknown> | null;
  grantConsumedAt: Date | null;
  /** The token's account id is a well-formed user id (only such an id can name an account). */
  accountLooked: boolean;
  userId: string | null;
  email: string | null;
  verifiedAt: Date | null;
  name: string | null;
  updatedAt: Date | null;
  /** For a spent token: the row key of the successor its rotation stored, if any, and whether that one is still unspent. */
  successorKey: string | null;
  successorUnspent: boolean;
}

// The account id as `parseId` accepts it; anything else is never cast (the cast would fail the statement).
const UUID_PATTERN = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";

/**
 * The refresh grant reads a refresh token, then its grant, then its account: three round trips one
 * after the other. This reads the three in one statement (one snapshot), under the same conditions
 * as each separate read: the token and the grant unexpired at `now` (the provider's model rows),
 * the account active and not deleted (as `prepareActiveAccount`). For a token already spent it also
 * reads the successor its rotation stored, so that a retry of a refresh whose answer was lost can
 * be told from a reuse (src/oidc/adapter.ts). Prepared once.
 */
export function prepareRefreshContext(db: Db): { execute(v: { id: string; now: string }): Promise<RefreshContextRow[]> } {
  const token = oidcPayloads;
  const grant = alias(oidcPayloads, "grant");
  const successor = alias(oidcPayloads, "successor");
  const record = oidcRefreshTokens;
  const now = sql.placeholder("now");
  const grantKey = sql<string | null>`encode(sha256(convert_to(${token.payload}->>'grantId', 'UTF8')), 'hex')`;
  const accountId = sql`${token.payload}->>'accountId'`;
  const accountLooked = sql<boolean>`coalesce(${accountId} ~* ${UUID_PATTERN}, false)`;
  return db
    .select({
      payload: token.payload,
      consumedAt: token.consumedAt,
      grantKey,
      grantFound: sql<boolean>`${grant.id} is not null`,
      grantPayload: grant.payload,
      grantConsumedAt: grant.consumedAt,
      accountLooked,
      userId: users.id,
      email: users.email,
      verifiedAt: users.emailVerifiedAt,
      name: users.fullName,
      updatedAt: users.updatedAt,
      successorKey: record.successorId,
      successorUnspent: sql<boolean>`${successor.id} is not null`,
    })
    .from(token)
    .leftJoin(grant, and(eq(grant.type, "Grant"), eq(grant.id, grantKey), or(isNull(grant.expiresAt), gt(grant.expiresAt, now))))
    .leftJoin(users, and(eq(users.id, sql`case when ${accountLooked} then (${accountId})::uuid end`), eq(users.status, "active"), live(users)))
    // Only a spent token's record is looked up (a live token, the usual case, needs neither row).
    .leftJoin(record, and(isNotNull(token.consumedAt), eq(record.id, token.id)))
    .leftJoin(successor, and(eq(successor.type, "RefreshToken"), eq(successor.id, record.successorId), isNull(successor.consumedAt), or(isNull(successor.expiresAt), gt(successor.expiresAt, now))))
    .where(and(eq(token.type, "RefreshToken"), eq(token.id, sql.placeholder("id")), or(isNull(token.expiresAt), gt(token.expiresAt, now))))
    .prepare("oidc_refresh_context");
}
