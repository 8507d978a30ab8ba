/**
 * The additional authenticated data each kind of sealed value is bound to, in one place: the owner
 * that seals a value and the re-sealing of every value under a new key (src/modules/keys) must agree,
 * or a value sealed by one could not be opened by the other.
 */
export const sealContexts = {
  caKey: (caKeyId: string) => `ca-key:${caKeyId}`,
  totp: (userId: string) => `totp:${userId}`,
  emailOutbox: () => "email-outbox",
  oidcSigningKey: (kid: string) => `oidc-signing-key:${kid}`,
  oidcClientSecret: (clientId: string) => `oidc-client:${clientId}`,
  oauthProviderSecret: (provider: string) => `oauth-provider:${provider}`,
  controllerToken: (orgId: string) => `zt-token:${orgId}`,
  oidcJti: (model: string) => `oidc-jti:${model}`,
  ssoConnectionSecret: (connectionId: string) => `sso-connection:${connectionId}`,
  auditSigningKey: (kid: string) => `audit-signing-key:${kid}`,
} as const;
