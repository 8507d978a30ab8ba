import * as oc from "openid-client";
import type { CredentialStore, ServerCredentials } from "./credentials.js";
import { notSignedIn } from "./errors.js";
import { discover, tokenFields } from "./oidc.js";

/** Refresh a little before expiry: a token that dies in flight costs a round trip and a retry. */
const EARLY_MS = 30_000;

/** The signed-in state for one server: hands out a usable access token, refreshing when needed. */
export class Session {
  constructor(
    readonly server: string,
    private readonly store: CredentialStore,
  ) {}

  credentials(): ServerCredentials {
    const creds = this.store.get(this.server);
    if (!creds) throw notSignedIn(this.server);
    return creds;
  }

  /** A token that is not known to be expired; `refused` is one the API just answered 401 to. */
  async accessToken(refused?: string): Promise<string> {
    const creds = this.credentials();
    if (creds.accessToken !== refused && creds.expiresAt > Date.now() + EARLY_MS) return creds.accessToken;
    return this.store.withLock(async () => {
      // Another keyward process may have refreshed while this one waited for the lock.
      const latest = this.credentials();
      if (latest.accessToken !== creds.accessToken && latest.accessToken !== refused && latest.expiresAt > Date.now() + EARLY_MS) return latest.accessToken;
      return this.refresh(latest);
    });
  }

  private async refresh(creds: ServerCredentials): Promise<string> {
    if (!creds.refreshToken) throw notSignedIn(this.server, "expired");
    const config = await discover(creds.issuer);
    let tokens: oc.TokenEndpointResponse;
    try {
      tokens = await oc.refreshTokenGrant(config, creds.refreshToken, { resource: creds.resource });
    } catch (e) {
      // The grant is gone (revoked, expired, password reset, consent withdrawn): the cached tokens are useless.
      if (e instanceof oc.ResponseBodyError && e.error === "invalid_grant") {
        this.store.remove(this.server);
        throw notSignedIn(this.server, "ended");
      }
      throw e;
    }
    this.store.save(this.server, { ...creds, ...tokenFields(tokens, creds.refreshToken) });
    return tokens.access_token;
  }
}

/**
 * Revokes the refresh token (which ends the grant) and then the access token, then forgets them.
 * The local copy goes even when the server cannot be reached; the caller is told revocation failed.
 */
export async function revokeAndForget(store: CredentialStore, server: string): Promise<{ revoked: boolean; error?: unknown }> {
  const creds = store.get(server);
  if (!creds) return { revoked: false };
  try {
    const config = await discover(creds.issuer);
    if (creds.refreshToken) await oc.tokenRevocation(config, creds.refreshToken, { token_type_hint: "refresh_token" });
    await oc.tokenRevocation(config, creds.accessToken, { token_type_hint: "access_token" });
    return { revoked: true };
  } catch (error) {
    return { revoked: false, error };
  } finally {
    store.remove(server);
  }
}
