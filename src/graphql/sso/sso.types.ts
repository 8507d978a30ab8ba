import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { GqlInput, GqlInputOf, InputOf } from "../common/inputs.js";
import type { ViewOf } from "../common/views.js";

type Role = "admin" | "member" | "guest";

@ObjectType({ description: "A group claim and what it grants in the organization (never owner)" })
export class SsoGroupMapping {
  @Field(() => String) group: string;
  @Field(() => String, { nullable: true, description: "admin, member or guest" }) role?: Role | null;
  @Field(() => [ID], { nullable: true }) departmentIds?: string[] | null;
}

@ObjectType({ description: "A pinned IdP signing certificate (public facts only)" })
export class SamlIdpCertificate {
  @Field(() => String, { description: "SHA-256 of the certificate (DER), colon-separated hex, as IdP consoles show it" }) fingerprintSha256: string;
  @Field(() => String, { nullable: true }) subjectCn: string | null;
  @Field(() => Date, { nullable: true, description: "null only for a certificate that cannot be read as X.509" }) notBefore: Date | null;
  @Field(() => Date, { nullable: true }) notAfter: Date | null;
  @Field(() => Boolean, { description: "The IdP's metadata no longer lists it: it is accepted only until overlapEndsAt (7 days after the refresh that dropped it)" }) inRolloverOverlap: boolean;
  @Field(() => Date, { nullable: true }) overlapEndsAt: Date | null;
}

@ObjectType({ description: "A SAML connection's settings and the SP values to give its IdP (the SP's private keys are never returned)" })
export class SamlConnectionSettings {
  @Field(() => String, { description: "The SP entity ID (also its metadata URL)" }) spEntityId: string;
  @Field(() => String) spMetadataUrl: string;
  @Field(() => String, { description: "Assertion Consumer Service URL (HTTP-POST)" }) acsUrl: string;
  @Field(() => String, { description: "Single logout URL (HTTP-Redirect)" }) sloUrl: string;
  @Field(() => String) idpEntityId: string;
  @Field(() => String) idpSsoUrl: string;
  @Field(() => String, { nullable: true }) idpSloUrl: string | null;
  @Field(() => String, { nullable: true, description: "Re-read periodically when set" }) idpMetadataUrl: string | null;
  @Field(() => String, { nullable: true }) metadataFetchedAt: string | null;
  @Field(() => Int, { description: "How many certificates the IdP lists now (without those kept for the rollover overlap)" }) idpCertificateCount: number;
  @Field(() => [SamlIdpCertificate], { description: "The pinned IdP signing certificates: the current ones, then those in their rollover overlap" }) idpCertificates: SamlIdpCertificate[];
  @Field(() => Boolean) allowIdpInitiated: boolean;
  @Field(() => Boolean) signAuthnRequests: boolean;
  @Field(() => Boolean) preferPostBinding: boolean;
  @Field(() => String, { description: "How AuthnRequests go to the IdP now: redirect or post" }) authnRequestBinding: "redirect" | "post";
  @Field(() => Boolean) wantEncryptedAssertions: boolean;
  @Field(() => String) spSigningCertificate: string;
  @Field(() => String) spEncryptionCertificate: string;
  @Field(() => String, { nullable: true, description: "null: the NameID" }) emailAttribute: string | null;
  @Field(() => String) nameAttribute: string;
  @Field(() => String) groupsAttribute: string;
}

@ObjectType({ description: "An organization's identity provider (OpenID Connect or SAML 2.0). Its secrets and private keys are never returned." })
export class SsoConnection implements ViewOf<"ssoConnections", "list"> {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String, { description: "oidc or saml" }) kind: "oidc" | "saml";
  @Field(() => String) name: string;
  @Field(() => Boolean) enabled: boolean;
  @Field(() => String, { description: "The role of a new member: admin, member or guest" }) defaultRole: Role;
  @Field(() => [SsoGroupMapping]) groupMappings: SsoGroupMapping[];
  @Field(() => Boolean, { description: "Accounts in the organization's verified domains must sign in through this connection" }) requireSso: boolean;
  @Field(() => Int) sessionMaxAgeSeconds: number;
  @Field(() => String, { nullable: true }) issuer: string | null;
  @Field(() => String, { nullable: true }) clientId: string | null;
  @Field(() => String, { nullable: true }) authMethod: string | null;
  @Field(() => [String]) allowedIdTokenAlgs: string[];
  @Field(() => [String]) scopes: string[];
  @Field(() => String, { nullable: true }) emailClaim: string | null;
  @Field(() => String, { nullable: true }) nameClaim: string | null;
  @Field(() => String, { nullable: true }) groupsClaim: string | null;
  @Field(() => Boolean, { description: "Whether a client secret or private key is stored" }) hasSecret: boolean;
  @Field(() => SamlConnectionSettings, { nullable: true, description: "SAML connections only" }) saml: SamlConnectionSettings | null;
  @Field(() => String, { description: "Register this redirect URI (SAML: the ACS URL) at the identity provider" }) redirectUri: string;
  @Field(() => String, { nullable: true, description: "OpenID Connect: register this back-channel logout URI at the identity provider (SAML: saml.sloUrl)" }) backchannelLogoutUri: string | null;
  @Field(() => String) startUrl: string;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@InputType()
export class SsoGroupMappingInput implements GqlInput<SsoGroupMappingInput, NonNullable<InputOf<"ssoConnections", "createOidc">["groupMappings"]>[number]> {
  @Field(() => String) group: string;
  @Field(() => String, { nullable: true }) role?: string | null;
  @Field(() => [ID], { nullable: true }) departmentIds?: string[] | null;
}

@InputType()
export class CreateOidcConnectionInput implements GqlInputOf<CreateOidcConnectionInput, "ssoConnections", "createOidc"> {
  @Field(() => String) name: string;
  @Field(() => String, { description: "Discovery is read from {issuer}/.well-known/openid-configuration" }) issuer: string;
  @Field(() => String) clientId: string;
  @Field(() => String, { nullable: true, description: "Write-only: sealed at rest" }) clientSecret?: string | null;
  @Field(() => String, { nullable: true, description: "private_key_jwt: a PKCS#8 PEM private key, write-only" }) privateKey?: string | null;
  @Field(() => String, { nullable: true, description: "client_secret_basic (default), client_secret_post or private_key_jwt" }) authMethod?: string | null;
  @Field(() => [String], { nullable: true }) allowedIdTokenAlgs?: string[] | null;
  @Field(() => [String], { nullable: true }) scopes?: string[] | null;
  @Field(() => String, { nullable: true }) emailClaim?: string | null;
  @Field(() => String, { nullable: true }) nameClaim?: string | null;
  @Field(() => String, { nullable: true }) groupsClaim?: string | null;
  @Field(() => Boolean, { nullable: true }) enabled?: boolean | null;
  @Field(() => String, { nullable: true }) defaultRole?: string | null;
  @Field(() => [SsoGroupMappingInput], { nullable: true }) groupMappings?: SsoGroupMappingInput[] | null;
  @Field(() => Boolean, { nullable: true }) requireSso?: boolean | null;
  @Field(() => Int, { nullable: true }) sessionMaxAgeSeconds?: number | null;
}

@InputType()
export class UpdateSsoConnectionInput implements GqlInputOf<UpdateSsoConnectionInput, "ssoConnections", "update"> {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) clientId?: string | null;
  @Field(() => String, { nullable: true, description: "Write-only: an absent value keeps the stored one" }) clientSecret?: string | null;
  @Field(() => String, { nullable: true }) privateKey?: string | null;
  @Field(() => String, { nullable: true }) authMethod?: string | null;
  @Field(() => [String], { nullable: true }) allowedIdTokenAlgs?: string[] | null;
  @Field(() => [String], { nullable: true }) scopes?: string[] | null;
  @Field(() => String, { nullable: true }) emailClaim?: string | null;
  @Field(() => String, { nullable: true }) nameClaim?: string | null;
  @Field(() => String, { nullable: true }) groupsClaim?: string | null;
  @Field(() => Boolean, { nullable: true }) enabled?: boolean | null;
  @Field(() => String, { nullable: true }) defaultRole?: string | null;
  @Field(() => [SsoGroupMappingInput], { nullable: true }) groupMappings?: SsoGroupMappingInput[] | null;
  @Field(() => Boolean, { nullable: true }) requireSso?: boolean | null;
  @Field(() => Int, { nullable: true }) sessionMaxAgeSeconds?: number | null;
  @Field(() => Boolean, { nullable: true, description: "Accept IdP-initiated responses (default false)" }) allowIdpInitiated?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: "Sign AuthnRequests (default true)" }) signAuthnRequests?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: "Send AuthnRequests by HTTP-POST where the IdP offers it (default false: HTTP-Redirect unless the IdP offers only POST)" }) preferPostBinding?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: "Ask the IdP to encrypt assertions (default true)" }) wantEncryptedAssertions?: boolean | null;
  @Field(() => String, { nullable: true, description: "default email, else the NameID" }) emailAttribute?: string | null;
  @Field(() => String, { nullable: true, description: "default name" }) nameAttribute?: string | null;
  @Field(() => String, { nullable: true, description: "default groups" }) groupsAttribute?: string | null;
}

@InputType()
export class CreateSamlConnectionInput implements GqlInputOf<CreateSamlConnectionInput, "ssoConnections", "createSaml"> {
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true, description: "The IdP's metadata URL: read now and re-read periodically" }) metadataUrl?: string | null;
  @Field(() => String, { nullable: true, description: "The IdP's metadata document" }) metadataXml?: string | null;
  @Field(() => String, { nullable: true, description: "Without metadata: the IdP entity ID" }) idpEntityId?: string | null;
  @Field(() => String, { nullable: true, description: "Without metadata: the IdP SSO URL (HTTP-Redirect)" }) idpSsoUrl?: string | null;
  @Field(() => String, { nullable: true }) idpSloUrl?: string | null;
  @Field(() => [String], { nullable: true, description: "Without metadata: the IdP signing certificates (PEM)" }) idpCertificates?: string[] | null;
  @Field(() => Boolean, { nullable: true, description: "Accept IdP-initiated responses (default false)" }) allowIdpInitiated?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: "Sign AuthnRequests (default true)" }) signAuthnRequests?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: "Send AuthnRequests by HTTP-POST where the IdP offers it (default false: HTTP-Redirect unless the IdP offers only POST)" }) preferPostBinding?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: "Ask the IdP to encrypt assertions (default true)" }) wantEncryptedAssertions?: boolean | null;
  @Field(() => String, { nullable: true, description: "default email, else the NameID" }) emailAttribute?: string | null;
  @Field(() => String, { nullable: true, description: "default name" }) nameAttribute?: string | null;
  @Field(() => String, { nullable: true, description: "default groups" }) groupsAttribute?: string | null;
  @Field(() => Boolean, { nullable: true }) enabled?: boolean | null;
  @Field(() => String, { nullable: true }) defaultRole?: string | null;
  @Field(() => [SsoGroupMappingInput], { nullable: true }) groupMappings?: SsoGroupMappingInput[] | null;
  @Field(() => Boolean, { nullable: true }) requireSso?: boolean | null;
  @Field(() => Int, { nullable: true }) sessionMaxAgeSeconds?: number | null;
}

@ObjectType({ description: "The organization a connection belongs to" })
export class SsoConnectionOrganization {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String) slug: string;
}

@ObjectType({ description: "A connection of one of your organizations you can link your account to (never its configuration)" })
export class MySsoConnection implements ViewOf<"ssoLinks", "listMyConnections"> {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String, { description: "oidc or saml" }) kind: "oidc" | "saml";
  @Field(() => SsoConnectionOrganization) organization: SsoConnectionOrganization;
  @Field(() => Boolean, { description: "Whether your account is linked to an identity at this connection" }) linked: boolean;
  @Field(() => Date, { nullable: true }) linkedAt: Date | null;
}

type SsoIdentityView = ViewOf<"linkedAccounts", "listMine">["ssoIdentities"][number];

@ObjectType({ description: "One of your single sign-on identities" })
export class LinkedSsoIdentity implements SsoIdentityView {
  @Field(() => ID) id: string;
  @Field(() => ID) connectionId: string;
  @Field(() => String) connectionName: string;
  @Field(() => String, { description: "oidc or saml" }) kind: "oidc" | "saml";
  @Field(() => SsoConnectionOrganization) organization: SsoConnectionOrganization;
  @Field(() => String, { nullable: true, description: "The address the identity provider last sent" }) email: string | null;
  @Field(() => Date) linkedAt: Date;
  @Field(() => Date, { nullable: true }) lastUsedAt: Date | null;
  @Field(() => String, { nullable: true, description: "Why it cannot be unlinked: managed (the organization manages your account) or sso_required (it requires SSO for your address); null when it can" })
  unlinkBlockedBy: "managed" | "sso_required" | null;
}

@ObjectType({ description: "Send the browser to authorizationUrl; the flow is bound to this browser by a cookie" })
export class SsoLinkStart {
  @Field(() => String) authorizationUrl: string;
}
