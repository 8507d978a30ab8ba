import { and, eq, gt, isNull, or, sql } from "drizzle-orm";
import { alias, type AnyPgColumn } from "drizzle-orm/pg-core";
import { oidcClients, oidcPayloads, oidcRefreshTokens } from "../../../schema/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";
import { isApiScope } from "../../lib/api-scopes.js";
import { sha256Hex } from "../../lib/crypto/index.js";
import type { Delegation } from "../../lib/request-context.js";

export interface DelegatedToken extends Delegation {
  userId: string;
}

const notExpired = (expiresAt: AnyPgColumn, now: unknown) => or(isNull(expiresAt), gt(expiresAt, now));

/**
 * OIDC access tokens issued for Keyward's own API (resource indicator `apiResource`), read from the
 * provider's storage. A token counts only while its grant lives (consent withdrawal, client removal,
 * refresh-token reuse and "sign out everywhere" end grants), its client still exists, and, for
 * tokens bound to a browser session, that session does; its scopes are cut to what the client is
 * allowed now, so narrowing a client's scopes takes effect at once.
 */
export class DelegatedTokensService {
  private readonly find;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audience: string,
  ) {
    const grant = alias(oidcPayloads, "grant");
    const session = alias(oidcPayloads, "browser_session");
    const token = oidcPayloads;
    const now = sql.placeholder("now");
    this.find = db
      .select({ payload: token.payload, allowed: oidcClients.allowedApiScopes })
      .from(token)
      .innerJoin(grant, and(eq(grant.type, "Grant"), eq(grant.id, sql`encode(sha256(convert_to(${token.grantId}, 'UTF8')), 'hex')`), notExpired(grant.expiresAt, now)))
      .innerJoin(oidcClients, and(eq(oidcClients.clientId, sql`${token.payload}->>'clientId'`), live(oidcClients)))
      .where(
        and(
          eq(token.type, "AccessToken"),
          eq(token.id, sql.placeholder("id")),
          notExpired(token.expiresAt, now),
          sql`(coalesce((${token.payload}->>'expiresWithSession')::boolean, false) = false or exists (
            select 1 from ${oidcPayloads} as "browser_session" where ${session.type} = 'Session' and ${session.uid} = ${token.payload}->>'sessionUid'
              and ${session.payload}->>'accountId' = ${token.payload}->>'accountId'
              and (${session.expiresAt} is null or ${session.expiresAt} > ${now})))`,
        ),
      )
      .prepare("oidc_delegated_token_find");
  }

  /** The delegation a bearer value carries, or null when it is not a live access token for this API. */
  async verify(value: string): Promise<DelegatedToken | null> {
    if (value.length < 20 || value.length > 512) return null;
    const [row] = await this.find.execute({ id: sha256Hex(value), now: this.clock.now().toISOString() });
    if (!row) return null;
    const p = row.payload as { aud?: unknown; accountId?: unknown; clientId?: unknown; grantId?: unknown; scope?: unknown; jkt?: unknown; "x5t#S256"?: unknown };
    // Tokens for other audiences (userinfo, another resource) and client-only tokens act for nobody here.
    if (p.aud !== this.audience || typeof p.accountId !== "string" || typeof p.clientId !== "string" || typeof p.grantId !== "string") return null;
    // Sender-constrained tokens need a proof this API does not check: refuse rather than accept bare.
    if (p.jkt || p["x5t#S256"]) return null;
    const allowed = new Set(row.allowed);
    const scopes = new Set(String(p.scope ?? "").split(" ").filter((s) => isApiScope(s) && allowed.has(s)));
    return { userId: p.accountId, clientId: p.clientId, grantId: p.grantId, scopes };
  }

  /**
   * Ends every token, grant, code and provider session of one account: password reset, "sign out
   * everywhere", suspension and deletion. Returns how many provider rows went.
   */
  async revokeForUser(userId: string): Promise<number> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.delete(oidcPayloads).where(sql`${oidcPayloads.payload}->>'accountId' = ${userId}`).returning({ id: oidcPayloads.id });
      await tx.delete(oidcRefreshTokens).where(eq(oidcRefreshTokens.accountId, userId));
      return rows.length;
    });
  }
}
