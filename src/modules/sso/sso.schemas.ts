import { z } from "zod";

/** JIT roles: an identity provider never makes anyone an owner (ARCHITECTURE rule 19). */
export const SSO_ROLES = ["admin", "member", "guest"] as const;
export type SsoRole = (typeof SSO_ROLES)[number];
export const AUTH_METHODS = ["client_secret_basic", "client_secret_post", "private_key_jwt"] as const;
/** Asymmetric ID-token algorithms only: HS* would make the client secret a signing key, `none` signs nothing. */
export const ID_TOKEN_ALGS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"] as const;

const claimName = z.string().trim().regex(/^[\w:./-]{1,100}$/, "a claim name such as email or groups");
const scope = z.string().regex(/^[\w:./-]{1,100}$/, "scopes are words such as openid or email");

export const groupMappingSchema = z.object({
  group: z.string().trim().min(1).max(255),
  role: z.enum(SSO_ROLES).nullish(),
  departmentIds: z.array(z.uuid()).max(50).nullish(),
});

const common = {
  name: z.string().trim().min(1).max(255),
  enabled: z.boolean().optional(),
  defaultRole: z.enum(SSO_ROLES).optional().describe("The role of a new member: admin, member or guest (never owner)"),
  groupMappings: z.array(groupMappingSchema).max(100).optional(),
  requireSso: z.boolean().optional().describe("Accounts in the organization's verified domains must sign in through this connection"),
  sessionMaxAgeSeconds: z.number().int().min(300).max(30 * 24 * 3600).optional(),
  clientId: z.string().trim().min(1).max(255),
  /** Write-only: sealed at rest, never returned. */
  clientSecret: z.string().min(1).max(2048).optional(),
  /** Write-only, for private_key_jwt: a PKCS#8 PEM private key (RSA or EC), sealed at rest. */
  privateKey: z.string().min(1).max(16384).optional(),
  authMethod: z.enum(AUTH_METHODS).optional(),
  allowedIdTokenAlgs: z.array(z.enum(ID_TOKEN_ALGS)).min(1).max(10).optional(),
  scopes: z.array(scope).max(20).optional(),
  emailClaim: claimName.optional(),
  nameClaim: claimName.optional(),
  groupsClaim: claimName.optional(),
};

export const createOidcConnectionSchema = z.object({
  ...common,
  issuer: z.url({ protocol: /^https?$/ }).max(2048).describe("The issuer: discovery is read from {issuer}/.well-known/openid-configuration"),
});
export type CreateOidcConnectionInput = z.input<typeof createOidcConnectionSchema>;

const pem = z.string().trim().min(100).max(16384).regex(/^(-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----|[A-Za-z0-9+/=\s]+)$/, "a PEM (or base64 DER) X.509 certificate");
const attributeName = z.string().trim().regex(/^[\w:./#-]{1,255}$/, "a SAML attribute name such as email or http://schemas.microsoft.com/ws/2008/06/identity/claims/groups");

const samlSettings = {
  allowIdpInitiated: z.boolean().optional().describe("Accept responses the IdP sends unasked (IdP-initiated). Off by default"),
  signAuthnRequests: z.boolean().optional().describe("Sign AuthnRequests (default true)"),
  preferPostBinding: z.boolean().optional().describe("Send AuthnRequests by HTTP-POST (signed inside the XML) where the IdP offers it; default false: HTTP-Redirect unless the IdP offers only POST"),
  wantEncryptedAssertions: z.boolean().optional().describe("Publish the encryption certificate so the IdP encrypts assertions (default true)"),
  emailAttribute: attributeName.nullish().describe("The attribute holding the email address (default `email`, else the NameID); null reads the NameID"),
  nameAttribute: attributeName.optional(),
  groupsAttribute: attributeName.optional(),
};

export const updateSsoConnectionSchema = z.object({
  name: common.name.optional(),
  enabled: common.enabled,
  defaultRole: common.defaultRole,
  groupMappings: common.groupMappings,
  requireSso: common.requireSso,
  sessionMaxAgeSeconds: common.sessionMaxAgeSeconds,
  clientId: common.clientId.optional(),
  clientSecret: common.clientSecret,
  privateKey: common.privateKey,
  authMethod: common.authMethod,
  allowedIdTokenAlgs: common.allowedIdTokenAlgs,
  scopes: common.scopes,
  emailClaim: common.emailClaim,
  nameClaim: common.nameClaim,
  groupsClaim: common.groupsClaim,
  ...samlSettings,
});
export type UpdateSsoConnectionInput = z.input<typeof updateSsoConnectionSchema>;

export const ssoStartQuerySchema = z.object({
  email: z.string().trim().min(3).max(320).optional(),
  /** Where a successful sign-in lands: a same-origin path; anything else is ignored. */
  next: z.string().max(2048).optional(),
});

export const ssoDiscoverSchema = z.object({
  email: z.string().trim().min(3).max(320).describe("The address the person typed on the sign-in page"),
});
export type SsoDiscoverInput = z.input<typeof ssoDiscoverSchema>;

export const ssoLinkMailSchema = z.object({
  ssoLink: z.string().min(1).max(128).describe("The pending link from the sign-in page's address (sso_link)"),
});
export type SsoLinkMailInput = z.input<typeof ssoLinkMailSchema>;

export const ssoLinkMailConfirmSchema = z.object({
  token: z.string().min(1).max(128).describe("The token from the emailed link"),
});
export type SsoLinkMailConfirmInput = z.input<typeof ssoLinkMailConfirmSchema>;
export type SsoStartQueryInput = z.input<typeof ssoStartQuerySchema>;

export const ssoCallbackQuerySchema = z.object({
  code: z.string().max(2048).optional(),
  state: z.string().max(512).optional(),
  iss: z.string().max(2048).optional(),
  error: z.string().max(256).optional(),
  errorDescription: z.string().max(1024).optional(),
});
export type SsoCallbackQueryInput = z.input<typeof ssoCallbackQuerySchema>;

/** A SAML connection: the IdP by metadata URL (re-read periodically), by metadata document, or by hand. */
export const createSamlConnectionSchema = z.object({
  name: common.name,
  enabled: common.enabled,
  defaultRole: common.defaultRole,
  groupMappings: common.groupMappings,
  requireSso: common.requireSso,
  sessionMaxAgeSeconds: common.sessionMaxAgeSeconds,
  metadataUrl: z.url({ protocol: /^https?$/ }).max(2048).optional().describe("The IdP's metadata URL: read now and re-read periodically (certificate rollover)"),
  metadataXml: z.string().min(1).max(512 * 1024).optional().describe("The IdP's metadata document"),
  idpEntityId: z.string().trim().min(1).max(1024).optional(),
  idpSsoUrl: z.url({ protocol: /^https?$/ }).max(2048).optional(),
  idpSloUrl: z.url({ protocol: /^https?$/ }).max(2048).optional(),
  idpCertificates: z.array(pem).min(1).max(5).optional(),
  ...samlSettings,
});
export type CreateSamlConnectionInput = z.input<typeof createSamlConnectionSchema>;
export const samlSettingsSchema = z.object(samlSettings);
