import { z } from "zod";
import type { Services } from "../../src/container.js";
import { date, type Item, named, type Returns, sameShape } from "./same-shape.js";

// --- SSO connections (never their secret) ---
export const ssoConnectionView = named("SsoConnection", z.object({
  id: z.string(),
  organizationId: z.string(),
  kind: z.enum(["oidc", "saml"]),
  name: z.string(),
  enabled: z.boolean(),
  defaultRole: z.enum(["admin", "member", "guest"]).describe("The role of a new member (never owner)"),
  groupMappings: z.array(z.object({ group: z.string(), role: z.enum(["admin", "member", "guest"]).nullish(), departmentIds: z.array(z.string()).nullish() })),
  requireSso: z.boolean(),
  sessionMaxAgeSeconds: z.number(),
  issuer: z.string().nullable(),
  clientId: z.string().nullable(),
  authMethod: z.string().nullable(),
  allowedIdTokenAlgs: z.array(z.string()),
  scopes: z.array(z.string()),
  emailClaim: z.string().nullable(),
  nameClaim: z.string().nullable(),
  groupsClaim: z.string().nullable(),
  hasSecret: z.boolean().describe("Whether a client secret or private key is stored (it is never returned)"),
  saml: z.object({
    spEntityId: z.string().describe("The SP entity ID (also its metadata URL)"),
    spMetadataUrl: z.string(),
    acsUrl: z.string().describe("Assertion Consumer Service URL (HTTP-POST)"),
    sloUrl: z.string().describe("Single logout URL (HTTP-Redirect)"),
    idpEntityId: z.string(),
    idpSsoUrl: z.string(),
    idpSloUrl: z.string().nullable(),
    idpMetadataUrl: z.string().nullable(),
    metadataFetchedAt: z.string().nullable(),
    idpCertificateCount: z.number().describe("How many certificates the IdP lists now (without those kept for the rollover overlap)"),
    idpCertificates: z.array(z.object({
      fingerprintSha256: z.string().describe("SHA-256 of the certificate (DER), colon-separated hex, as IdP consoles show it"),
      subjectCn: z.string().nullable(),
      notBefore: date.nullable().describe("null only for a certificate that cannot be read as X.509"),
      notAfter: date.nullable(),
      inRolloverOverlap: z.boolean().describe("The IdP's metadata no longer lists it: it is accepted only until overlap_ends_at (7 days after the refresh that dropped it)"),
      overlapEndsAt: date.nullable(),
    })).describe("The pinned IdP signing certificates (public facts only): the current ones, then those in their rollover overlap"),
    allowIdpInitiated: z.boolean(),
    signAuthnRequests: z.boolean(),
    preferPostBinding: z.boolean(),
    authnRequestBinding: z.enum(["redirect", "post"]).describe("How AuthnRequests go to the IdP now: HTTP-Redirect, or HTTP-POST (the IdP offers only POST, or prefer_post_binding and it offers POST)"),
    wantEncryptedAssertions: z.boolean(),
    spSigningCertificate: z.string(),
    spEncryptionCertificate: z.string(),
    emailAttribute: z.string().nullable(),
    nameAttribute: z.string(),
    groupsAttribute: z.string(),
  }).nullable().describe("SAML connections only (the SP's private keys are never returned)"),
  redirectUri: z.string().describe("Register this redirect URI (SAML: the ACS URL) at the identity provider"),
  backchannelLogoutUri: z.string().nullable().describe("OpenID Connect: register this back-channel logout URI at the identity provider (SAML: saml.slo_url)"),
  startUrl: z.string().describe("Starts a sign-in through this connection"),
  createdAt: date,
  updatedAt: date,
}));
sameShape<z.output<typeof ssoConnectionView>, Item<Returns<Services["ssoConnections"]["list"]>>>();
sameShape<z.output<typeof ssoConnectionView>, Returns<Services["ssoConnections"]["update"]>>();

// --- a member's view of their organizations' connections (never their configuration) ---
export const memberSsoConnectionView = named("MemberSsoConnection", z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(["oidc", "saml"]),
  organization: z.object({ id: z.string(), name: z.string(), slug: z.string() }),
  linked: z.boolean().describe("Whether your account is linked to an identity at this connection"),
  linkedAt: date.nullable(),
}));
sameShape<z.output<typeof memberSsoConnectionView>, Item<Returns<Services["ssoLinks"]["listMyConnections"]>>>();
