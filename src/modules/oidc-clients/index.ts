import type { Config } from "../../config/index.js";
import type { Database } from "../../infra/db.js";
import { apiResource } from "../../lib/api-scopes.js";
import type { SealingDeps } from "../module-deps.js";
import { OidcClientAdminService } from "./client-admin.service.js";
import { DelegatedTokensService } from "./delegated-tokens.service.js";
import { OidcClientsService } from "./oidc-clients.service.js";
import { OidcIdentityService } from "./oidc-identity.service.js";
import { OidcSigningKeysService } from "./signing-keys.service.js";
import { OidcRegistrationService } from "./registration.service.js";

/**
 * OpenID Connect clients: the relying parties organizations register, Keyward's built-in clients,
 * and what the provider (src/oidc) needs about them: each client's metadata, the people it may
 * issue tokens for and the consents they gave, the provider's signing keys, and the delegated
 * tokens it issued for Keyward's own API. Everything outside this folder imports from here; the
 * repositories stay inside (the client secrets and the signing keys' sealed JWKs are read by
 * oidc-clients.secrets.repository.ts and signing-keys.secrets.repository.ts only).
 */
export { ensureBuiltInClients, KEYWARD_CLI_CLIENT_ID } from "./builtin-clients.js";
export { OidcClientAdminService, configureClientSchema } from "./client-admin.service.js";
export { DelegatedTokensService, type DelegatedToken } from "./delegated-tokens.service.js";
export { noteClientChanged } from "./client-cache.js";
export { ClientErrors, RegistrationErrors } from "./oidc-clients.errors.js";
export { createClientSchema, updateClientSchema, createRegistrationTokenSchema, ID_TOKEN_SIGNING_ALGS, TOKEN_ENDPOINT_AUTH_METHODS } from "./oidc-clients.schemas.js";
export { newClientId, newClientSecret } from "./client-ids.js";
export { OidcRegistrationService, REGISTRATION_TOKEN_PREFIX, type Registration, type RegistrationTokenView } from "./registration.service.js";
export { CLIENT_EXTRA, OidcClientsService, isClientId, type ClientView } from "./oidc-clients.service.js";
export type { ConsentView } from "./oidc-consents.repository.js";
export { OidcIdentityService, type OidcAccount, type OidcClientSummary, type RefreshTokenContext } from "./oidc-identity.service.js";
export { OidcSigningKeysService, type SigningKeySet } from "./signing-keys.service.js";

export interface OidcModuleDeps extends SealingDeps {
  /** The database's change announcements (Database.listen), which keep the client cache exact. */
  changes: Pick<Database, "listen" | "db">;
  config: Pick<Config, "http" | "oidc" | "cache">;
}

/** Everything the OpenID Connect provider (src/oidc) and the doors need about clients and tokens (rule 15). */
export function createOidcModule(deps: OidcModuleDeps) {
  const { db, clock, box, audit, config } = deps;
  return {
    oidcClients: new OidcClientsService(db, clock, audit, box, { changes: deps.changes, ttlMs: config.cache.ttlMs }),
    oidcClientAdmin: new OidcClientAdminService(db, clock, audit),
    oidcRegistration: new OidcRegistrationService(db, clock, audit, box, { enabled: config.oidc.dynamicRegistration }),
    oidcIdentity: new OidcIdentityService(db, clock, audit),
    oidcKeys: new OidcSigningKeysService(db, clock, box, audit, { rotationDays: config.oidc.keyRotationDays, graceDays: config.oidc.keyGraceDays }),
    delegatedTokens: new DelegatedTokensService(db, clock, apiResource(config.http.publicUrl)),
  };
}
