import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, deletedAt, id, tstz, updatedAt } from "./_columns.js";
import { organizations } from "./orgs.js";
import { users } from "./users.js";

/** oidc-provider's storage (sessions, codes, tokens, grants, interactions …), one row per model instance. */
export const oidcPayloads = pgTable(
  "oidc_payloads",
  {
    id: varchar("id", { length: 255 }).notNull(),
    type: varchar("type", { length: 64 }).notNull(),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    grantId: varchar("grant_id", { length: 255 }),
    userCode: varchar("user_code", { length: 255 }),
    uid: varchar("uid", { length: 255 }),
    expiresAt: tstz("expires_at"),
    consumedAt: tstz("consumed_at"),
  },
  (t) => [
    primaryKey({ columns: [t.type, t.id] }),
    index("oidc_payloads_grant_idx").on(t.grantId),
    index("oidc_payloads_user_code_idx").on(t.userCode),
    index("oidc_payloads_uid_idx").on(t.uid),
    index("oidc_payloads_expires_idx").on(t.expiresAt),
    // "Sign out everywhere", password resets and suspensions end every token of one account.
    index("oidc_payloads_account_idx").on(sql`(${t.payload}->>'accountId')`),
  ],
);

/**
 * Refresh tokens as the spec records them: `access_token_id` is a plain string of up to 255
 * characters (the access token issued with it), deliberately without a foreign key.
 * `successor_id` is the row key of the token that replaced this one when it was rotated: a retry
 * within the grace period may replace that successor once more while it is unused (src/oidc/adapter.ts).
 */
export const oidcRefreshTokens = pgTable(
  "oidc_refresh_tokens",
  {
    id: varchar("id", { length: 255 }).primaryKey(),
    grantId: varchar("grant_id", { length: 255 }).notNull(),
    clientId: varchar("client_id", { length: 255 }).notNull(),
    accountId: varchar("account_id", { length: 255 }),
    accessTokenId: varchar("access_token_id", { length: 255 }),
    expiresAt: tstz("expires_at"),
    consumedAt: tstz("consumed_at"),
    createdAt: createdAt(),
    successorId: varchar("successor_id", { length: 255 }),
  },
  (t) => [index("oidc_refresh_tokens_grant_idx").on(t.grantId)],
);

/**
 * Relying parties, registered per organization by its admins, and Keyward's own built-in clients
 * (no organization; configured by superadmins, never deleted).
 */
export const oidcClients = pgTable(
  "oidc_clients",
  {
    id: id(),
    organizationId: uuid("organization_id").references(() => organizations.id),
    builtIn: boolean("built_in").notNull().default(false),
    /** Keyward API scopes (lib/api-scopes) the client may request for delegated tokens: set by superadmins only. */
    allowedApiScopes: text("allowed_api_scopes").array().notNull().default(sql`'{}'::text[]`),
    clientId: varchar("client_id", { length: 64 }).notNull(),
    name: varchar("name", { length: 255 }).notNull(),
    redirectUris: text("redirect_uris").array().notNull(),
    postLogoutRedirectUris: text("post_logout_redirect_uris").array().notNull().default(sql`'{}'::text[]`),
    grantTypes: text("grant_types").array().notNull(),
    /** "client_secret_basic" / "client_secret_post" for confidential clients, "none" for public ones. */
    tokenEndpointAuthMethod: varchar("token_endpoint_auth_method", { length: 32 }).notNull(),
    clientSecretSealed: text("client_secret_sealed"),
    corsOrigins: text("cors_origins").array().notNull().default(sql`'{}'::text[]`),
    accessTokenTtl: integer("access_token_ttl").notNull().default(3600),
    idTokenTtl: integer("id_token_ttl").notNull().default(3600),
    refreshTokenTtl: integer("refresh_token_ttl").notNull().default(2592000),
    /** JWS algorithm of the client's ID tokens: "RS256" (the OpenID Connect default) or "ES256". */
    idTokenSignedResponseAlg: varchar("id_token_signed_response_alg", { length: 16 }).notNull().default("RS256"),
    /** The initial access token a client registered itself with (RFC 7591); null for clients an admin created. */
    registrationTokenId: uuid("registration_token_id").references(() => oidcRegistrationTokens.id),
    createdBy: uuid("created_by").references(() => users.id),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [uniqueIndex("oidc_clients_client_id_uq").on(t.clientId), index("oidc_clients_org_idx").on(t.organizationId)],
);

/**
 * Initial access tokens for Dynamic Client Registration (RFC 7591 §3), issued by an organization's
 * admins or a superadmin: each lets a tool register clients that belong to that organization. Only
 * the token's SHA-256 is kept. `uses` counts registrations, up to `max_uses` when that is set;
 * revoked tokens stay listed for the record.
 */
export const oidcRegistrationTokens = pgTable(
  "oidc_registration_tokens",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    name: varchar("name", { length: 255 }).notNull(),
    /** The non-secret start of the token ("kwr_ab12cd34"), shown in lists so a token can be recognised. */
    prefix: varchar("prefix", { length: 32 }).notNull(),
    tokenHash: varchar("token_hash", { length: 64 }).notNull().unique(),
    maxUses: integer("max_uses"),
    uses: integer("uses").notNull().default(0),
    expiresAt: tstz("expires_at").notNull(),
    lastUsedAt: tstz("last_used_at"),
    revokedAt: tstz("revoked_at"),
    createdBy: uuid("created_by").references(() => users.id),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("oidc_registration_tokens_org_idx").on(t.organizationId)],
);

/** Signing keys for ID tokens and JWT responses: private JWKs sealed at rest. */
export const oidcSigningKeys = pgTable("oidc_signing_keys", {
  kid: varchar("kid", { length: 64 }).primaryKey(),
  alg: varchar("alg", { length: 16 }).notNull(),
  privateJwkSealed: text("private_jwk_sealed").notNull(),
  createdAt: createdAt(),
  /** After this the key no longer signs (a newer one does); it stays published until expires_at. */
  retiredAt: tstz("retired_at"),
  expiresAt: tstz("expires_at"),
});

/** Consent a user gave a client for a set of scopes: remembered until the user revokes it. */
export const oidcConsents = pgTable(
  "oidc_consents",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    clientId: varchar("client_id", { length: 64 }).notNull(),
    scopes: text("scopes").array().notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] })],
);
