import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { API_SCOPE_NAMES } from "../../lib/api-scopes.js";
import { oidcClientsRepository } from "./oidc-clients.repository.js";

/** The `keyward` command-line client: public (PKCE), loopback redirect on any port, device grant. */
export const KEYWARD_CLI_CLIENT_ID = "keyward-cli";

const BUILT_IN = [
  {
    clientId: KEYWARD_CLI_CLIENT_ID,
    name: "Keyward command-line client",
    // Native client: oidc-provider matches loopback redirects without their port (RFC 8252 §7.3).
    redirectUris: ["http://127.0.0.1/callback", "http://[::1]/callback"],
    grantTypes: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
    tokenEndpointAuthMethod: "none",
    allowedApiScopes: [...API_SCOPE_NAMES],
    // Short access tokens (the CLI refreshes them); the refresh token rotates on each use.
    accessTokenTtl: 900,
    idTokenTtl: 900,
    refreshTokenTtl: 30 * 86_400,
  },
];

/**
 * Creates Keyward's own clients when they are missing (every start, every instance: idempotent).
 * A superadmin's later configuration of them is kept: nothing is overwritten.
 */
export async function ensureBuiltInClients(db: Db, clock: Clock): Promise<void> {
  const now = clock.now();
  await oidcClientsRepository.insertMissing(db, BUILT_IN.map((c) => ({ ...c, organizationId: null, builtIn: true, createdAt: now, updatedAt: now })));
}
