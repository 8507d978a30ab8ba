import { and, eq } from "drizzle-orm";
import { oidcPayloads } from "../../../schema/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { sha256Hex } from "../../lib/crypto/index.js";

/** The scope a relying party asks for to call Keyward's own API as the user. */
export const API_SCOPE = "api";

export interface OidcAccessGrant {
  userId: string;
  clientId: string;
  scopes: string[];
}

/**
 * Reads access tokens the OIDC provider issued (stored by its adapter under the token's SHA-256),
 * so that a relying party granted the `api` scope can call /api/v1 and /graphql as its user.
 * Revoked, expired and client-credential tokens (no user) are not grants to act as anyone.
 */
export class OidcAccessTokenReader {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async resolve(token: string): Promise<OidcAccessGrant | null> {
    if (token.length > 512) return null;
    const [row] = await this.db
      .select({ payload: oidcPayloads.payload, expiresAt: oidcPayloads.expiresAt })
      .from(oidcPayloads)
      .where(and(eq(oidcPayloads.type, "AccessToken"), eq(oidcPayloads.id, sha256Hex(token))));
    if (!row) return null;
    const now = this.clock.now().getTime();
    const p = row.payload as { accountId?: unknown; clientId?: unknown; scope?: unknown; exp?: unknown };
    // Expired (the purge job may not have run yet).
    if ((row.expiresAt && row.expiresAt.getTime() <= now) || (typeof p.exp === "number" && p.exp * 1000 <= now)) return null;
    // Client credentials: a client acting for itself, not for a user.
    if (typeof p.accountId !== "string" || typeof p.clientId !== "string") return null;
    const scopes = typeof p.scope === "string" ? p.scope.split(" ") : [];
    // Only tokens the user consented to for API use.
    if (!scopes.includes(API_SCOPE)) return null;
    return { userId: p.accountId, clientId: p.clientId, scopes };
  }
}
