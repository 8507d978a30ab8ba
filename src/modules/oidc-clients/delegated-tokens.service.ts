import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { isApiScope } from "../../lib/api-scopes.js";
import { sha256Hex } from "../../lib/crypto/index.js";
import type { Delegation } from "../../lib/request-context.js";
import { oidcPayloadsRepository } from "./oidc-payloads.repository.js";

export interface DelegatedToken extends Delegation {
  userId: string;
}

/**
 * OIDC access tokens issued for Keyward's own API (resource indicator `apiResource`), read from the
 * provider's storage. A token counts only while its grant lives (consent withdrawal, client removal,
 * refresh-token reuse and "sign out everywhere" end grants), its client still exists, and, for
 * tokens bound to a browser session, that session does; its scopes are cut to what the client is
 * allowed now, so narrowing a client's scopes takes effect at once.
 */
export class DelegatedTokensService {
  /** Checked on every API request that carries a bearer token: prepared once. */
  private readonly find = oidcPayloadsRepository.prepareLiveAccessToken(this.db);

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audience: string,
  ) {}

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
    return this.db.transaction((tx) => this.revokeForUserIn(tx, userId));
  }

  /** The same inside the caller's transaction (offboarding: with its cuts and its receipt). */
  async revokeForUserIn(tx: Executor, userId: string): Promise<number> {
    return oidcPayloadsRepository.deleteForAccount(tx, userId);
  }
}
