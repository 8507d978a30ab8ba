import { sql } from "drizzle-orm";
import { index, jsonb, pgTable, text, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, id, tstz } from "./_columns.js";
import { organizations } from "./orgs.js";
import { users } from "./users.js";

/** A host key as enrolled: its line and fingerprint (the certificate for it is in ssh_certificates). */
export interface HostKeyEntry {
  publicKey: string;
  fingerprint: string;
  keyType: string;
}

/** The certificate a host holds now, per key. */
export interface HostCertEntry {
  fingerprint: string;
  certificateId: string;
  serial: string;
  validBefore: string;
  /** The certificate itself (public): an unchanged renewal hands it back. */
  certificate: string;
}

/**
 * One-time enrollment tokens: an organization admin lets one server enroll its host keys for the
 * names listed. Only the token's SHA-256 is stored; it is used once, then it is spent.
 */
export const hostEnrollmentTokens = pgTable(
  "host_enrollment_tokens",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    tokenHash: varchar("token_hash", { length: 64 }).notNull(),
    prefix: varchar("prefix", { length: 32 }).notNull(),
    names: text("names").array().notNull(),
    description: text("description"),
    expiresAt: tstz("expires_at").notNull(),
    createdBy: uuid("created_by")
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
    usedAt: tstz("used_at"),
    hostId: uuid("host_id"),
    revokedAt: tstz("revoked_at"),
    revokedBy: uuid("revoked_by").references(() => users.id),
  },
  (t) => [uniqueIndex("host_enrollment_tokens_hash_uq").on(t.tokenHash), index("host_enrollment_tokens_org_idx").on(t.organizationId, t.createdAt)],
);

/**
 * Servers enrolled in an organization: their names and host keys, the certificates they hold, when
 * they last renewed; retired hosts keep their row (their certificates are revoked).
 */
export const sshHosts = pgTable(
  "ssh_hosts",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    name: varchar("name", { length: 255 }).notNull(),
    names: text("names").array().notNull(),
    hostKeys: jsonb("host_keys").$type<HostKeyEntry[]>().notNull(),
    certificates: jsonb("certificates").$type<HostCertEntry[]>().notNull().default([]),
    certValidBefore: tstz("cert_valid_before"),
    certValidAfter: tstz("cert_valid_after"),
    lastRenewedAt: tstz("last_renewed_at"),
    enrolledAt: tstz("enrolled_at").notNull(),
    enrollmentTokenId: uuid("enrollment_token_id").references(() => hostEnrollmentTokens.id),
    enrolledBy: uuid("enrolled_by").references(() => users.id),
    renewChallengeHash: varchar("renew_challenge_hash", { length: 64 }),
    renewChallengeExpiresAt: tstz("renew_challenge_expires_at"),
    retiredAt: tstz("retired_at"),
    retiredBy: uuid("retired_by").references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [index("ssh_hosts_org_idx").on(t.organizationId, t.name), index("ssh_hosts_live_idx").on(t.organizationId).where(sql`${t.retiredAt} is null`)],
);

/**
 * Which certificate principals may log in as which local account on the hosts a pattern matches:
 * the host's AuthorizedPrincipalsFile (one file per login, written by `keyward host enroll/renew`).
 */
export const hostPrincipalMaps = pgTable(
  "host_principal_maps",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    hostPattern: varchar("host_pattern", { length: 253 }).notNull(),
    login: varchar("login", { length: 32 }).notNull(),
    principals: text("principals").array().notNull(),
    createdBy: uuid("created_by").references(() => users.id),
    createdAt: createdAt(),
    updatedAt: tstz("updated_at").notNull(),
  },
  (t) => [uniqueIndex("host_principal_maps_uq").on(t.organizationId, t.hostPattern, t.login)],
);
