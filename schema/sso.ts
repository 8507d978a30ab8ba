import { sql } from "drizzle-orm";
import { boolean, check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, deletedAt, id, tstz, updatedAt } from "./_columns.js";
import { organizations } from "./orgs.js";
import { users } from "./users.js";

/** A group claim (OIDC) or attribute value (SAML) and what it grants in the organization. */
export interface SsoGroupMapping {
  group: string;
  role?: "admin" | "member" | "guest" | null;
  departmentIds?: string[] | null;
}

/** OpenID Connect settings of a connection (SAML connections keep theirs in the same column). */
export interface OidcConnectionConfig {
  issuer: string;
  clientId: string;
  authMethod: "client_secret_basic" | "client_secret_post" | "private_key_jwt";
  allowedIdTokenAlgs: string[];
  scopes: string[];
  claims: { email: string; name: string; groups: string };
}

/** SAML 2.0 settings of a connection (its SP private keys are sealed in `secret_sealed`, as JSON). */
export interface SamlConnectionConfig {
  idpEntityId: string;
  idpSsoUrl: string;
  idpSsoBinding: "redirect" | "post";
  /** The IdP's HTTP-POST SingleSignOnService when its metadata lists one besides HTTP-Redirect (absent on older rows). */
  idpSsoPostUrl?: string | null;
  /** Send AuthnRequests by HTTP-POST where the IdP offers it (absent on older rows: false). */
  preferPostBinding?: boolean;
  idpSloUrl: string | null;
  /** The pinned IdP signing certificates (PEM). */
  idpCertsPem: string[];
  /** Certificates the IdP's metadata dropped, still accepted until `until` (ISO time): a rollover overlap. */
  previousCertsPem: { pem: string; until: string }[];
  /** Where the IdP's metadata is re-read from; null when it was given as a document or by hand. */
  metadataUrl: string | null;
  metadataFetchedAt: string | null;
  allowIdpInitiated: boolean;
  signAuthnRequests: boolean;
  wantEncryptedAssertions: boolean;
  spSigningCertPem: string;
  spEncryptionCertPem: string;
  /** Attribute names; `email: null` reads the NameID. */
  attributes: { email: string | null; name: string; groups: string };
}

/**
 * An organization's own identity provider (issue 35). `kind` is oidc or saml; `config` holds the
 * protocol's settings; the client secret (or the private key for private_key_jwt) is sealed,
 * bound to the connection id. Never an owner: `default_role` and mapped roles stop at admin.
 */
export const ssoConnections = pgTable(
  "sso_connections",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    kind: varchar("kind", { length: 8 }).notNull(),
    name: varchar("name", { length: 255 }).notNull(),
    enabled: boolean("enabled").notNull().default(false),
    defaultRole: varchar("default_role", { length: 16 }).notNull().default("member"),
    groupMappings: jsonb("group_mappings").$type<SsoGroupMapping[]>().notNull().default([]),
    /** Accounts in the organization's verified domains must sign in through this connection. */
    requireSso: boolean("require_sso").notNull().default(false),
    /** The longest an SSO session lasts (the IdP session's bound when it offers no logout channel). */
    sessionMaxAgeSeconds: integer("session_max_age_seconds").notNull().default(28800),
    config: jsonb("config").$type<Record<string, unknown>>().notNull(),
    secretSealed: text("secret_sealed"),
    createdBy: uuid("created_by").references(() => users.id),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [
    index("sso_connections_org_idx").on(t.organizationId).where(sql`${t.deletedAt} is null`),
    check("sso_connections_kind_ck", sql`${t.kind} in ('oidc', 'saml')`),
    check("sso_connections_role_ck", sql`${t.defaultRole} in ('admin', 'member', 'guest')`),
  ],
);

/** A person at a connection's identity provider (its stable subject) and the account it signs in to. */
export const ssoIdentities = pgTable(
  "sso_identities",
  {
    id: id(),
    connectionId: uuid("connection_id")
      .notNull()
      .references(() => ssoConnections.id),
    subject: varchar("subject", { length: 255 }).notNull(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    email: varchar("email", { length: 320 }),
    createdAt: createdAt(),
    lastLoginAt: tstz("last_login_at"),
  },
  (t) => [uniqueIndex("sso_identities_subject_uq").on(t.connectionId, t.subject), uniqueIndex("sso_identities_user_uq").on(t.connectionId, t.userId)],
);
