/**
 * OpenID Connect clients: the relying parties organizations register, Keyward's built-in clients,
 * and what the provider (src/oidc) needs about them: each client's metadata, the people it may
 * issue tokens for and the consents they gave, the provider's signing keys, and the delegated
 * tokens it issued for Keyward's own API. Everything outside this folder imports from here; the
 * repositories (client-secret.repository.ts and the signing keys' sealed JWKs are privileged)
 * stay inside.
 */
export { ensureBuiltInClients, KEYWARD_CLI_CLIENT_ID } from "./builtin-clients.js";
export { OidcClientAdminService, configureClientSchema } from "./client-admin.service.js";
export { DelegatedTokensService, type DelegatedToken } from "./delegated-tokens.service.js";
export { ClientErrors } from "./oidc-clients.errors.js";
export { createClientSchema, updateClientSchema, ID_TOKEN_SIGNING_ALGS } from "./oidc-clients.schemas.js";
export { CLIENT_EXTRA, OidcClientsService, isClientId, type ClientView } from "./oidc-clients.service.js";
export type { ConsentView } from "./oidc-consents.repository.js";
export { OidcIdentityService, type OidcAccount, type OidcClientSummary } from "./oidc-identity.service.js";
export { OidcSigningKeysService, type SigningKeySet } from "./signing-keys.service.js";
