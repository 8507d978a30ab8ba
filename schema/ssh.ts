import { sql } from "drizzle-orm";
import { bigint, boolean, customType, index, integer, jsonb, pgEnum, pgSequence, pgTable, smallint, text, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, deletedAt, id, tstz, updatedAt } from "./_columns.js";
import { organizations } from "./orgs.js";
import { users } from "./users.js";

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

export const sshKeyType = pgEnum("ssh_key_type", ["ed25519", "ecdsa", "rsa"]);
/** A person's key: also FIDO2 security keys (sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com). CA keys keep ssh_key_type. */
export const sshUserKeyType = pgEnum("ssh_user_key_type", ["ed25519", "ecdsa", "rsa", "sk-ed25519", "sk-ecdsa"]);
export const caType = pgEnum("ca_type", ["user", "host"]);
export const certType = pgEnum("cert_type", ["user", "host"]);

/** Users' SSH public keys. The same key may belong to several users; one user holds it once. */
export const sshKeys = pgTable(
  "ssh_keys",
  {
    id: id(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    publicKey: text("public_key").notNull(),
    fingerprint: varchar("fingerprint", { length: 128 }).notNull(),
    keyType: sshUserKeyType("key_type").notNull(),
    keyBits: integer("key_bits").notNull(),
    keyComment: text("key_comment"),
    description: text("description"),
    verifiedAt: tstz("verified_at"),
    verifyText: text("verify_text"),
    verifyTextCreatedAt: tstz("verify_text_created_at"),
    /** A security key's FIDO flags in the signature that proved possession (0x01 touch, 0x04 PIN/biometric); null otherwise. */
    skProofFlags: smallint("sk_proof_flags"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [uniqueIndex("ssh_keys_user_fingerprint_live_uq").on(t.userId, t.fingerprint).where(sql`${t.deletedAt} is null`)],
);

/** A certificate authority of an organization: its configuration; its keys are in ca_keys. */
export const certificateAuthorities = pgTable(
  "certificate_authorities",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    name: varchar("name", { length: 255 }).notNull(),
    description: text("description"),
    caType: caType("ca_type").notNull(),
    defaultValidityHours: integer("default_validity_hours").notNull(),
    maxValidityHours: integer("max_validity_hours").notNull(),
    /**
     * A host CA's host patterns (ssh_config / known_hosts patterns): the hosts its `@cert-authority`
     * line vouches for and that `keyward ssh config` matches. Null: not set (known_hosts says `*`).
     */
    hostPatterns: text("host_patterns").array(),
    createdBy: uuid("created_by").references(() => users.id),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [
    // At most one live user CA and one live host CA per organization.
    uniqueIndex("certificate_authorities_org_type_live_uq").on(t.organizationId, t.caType).where(sql`${t.deletedAt} is null`),
  ],
);

/**
 * CA key pairs. One is active per CA; after a rotation the previous public key stays trusted
 * until trusted_until. The private key is only ever stored sealed (AES-256-GCM, versioned key id).
 */
export const caKeys = pgTable(
  "ca_keys",
  {
    id: id(),
    caId: uuid("ca_id")
      .notNull()
      .references(() => certificateAuthorities.id),
    keyType: sshKeyType("key_type").notNull(),
    publicKey: text("public_key").notNull(),
    fingerprint: varchar("fingerprint", { length: 128 }).notNull(),
    privateKeySealed: text("private_key_sealed").notNull(),
    isActive: boolean("is_active").notNull().default(true),
    rotatedAt: tstz("rotated_at"),
    rotationReason: text("rotation_reason"),
    trustedUntil: tstz("trusted_until"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("ca_keys_one_active_uq").on(t.caId).where(sql`${t.isActive}`),
    index("ca_keys_ca_idx").on(t.caId),
  ],
);

/** One sequence for every CA: serials never repeat, under any concurrency, without locking. */
export const sshCertSerialSeq = pgSequence("ssh_cert_serial_seq", { startWith: 1000, minValue: 1 });

export const sshCertificates = pgTable(
  "ssh_certificates",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    caId: uuid("ca_id")
      .notNull()
      .references(() => certificateAuthorities.id),
    caKeyId: uuid("ca_key_id")
      .notNull()
      .references(() => caKeys.id),
    userId: uuid("user_id").references(() => users.id),
    sshKeyId: uuid("ssh_key_id").references(() => sshKeys.id),
    certType: certType("cert_type").notNull(),
    serial: bigint("serial", { mode: "bigint" }).notNull(),
    keyId: text("key_id").notNull(),
    principals: text("principals").array().notNull(),
    extensions: text("extensions").array().notNull(),
    criticalOptions: jsonb("critical_options").$type<Record<string, string>>().notNull().default({}),
    validAfter: tstz("valid_after").notNull(),
    validBefore: tstz("valid_before").notNull(),
    publicKeyFingerprint: varchar("public_key_fingerprint", { length: 128 }).notNull(),
    certificate: text("certificate").notNull(),
    revokedAt: tstz("revoked_at"),
    revokeReason: text("revoke_reason"),
    revokedBy: uuid("revoked_by").references(() => users.id),
    requestIp: varchar("request_ip", { length: 45 }),
    requestUserAgent: text("request_user_agent"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("ssh_certificates_ca_serial_uq").on(t.caId, t.serial),
    index("ssh_certificates_user_idx").on(t.userId, t.createdAt),
    index("ssh_certificates_org_idx").on(t.organizationId, t.createdAt),
    index("ssh_certificates_org_serial_idx").on(t.organizationId, t.serial),
  ],
);

/** The certificate audit log: every issue, failure and revocation, with the signing organization. */
export const certificateAuditLogs = pgTable(
  "certificate_audit_logs",
  {
    id: id(),
    createdAt: createdAt(),
    organizationId: uuid("organization_id"),
    certificateId: uuid("certificate_id"),
    userId: uuid("user_id"),
    action: varchar("action", { length: 50 }).notNull(),
    success: boolean("success").notNull().default(true),
    message: text("message"),
    ipAddress: varchar("ip_address", { length: 45 }),
    userAgent: text("user_agent"),
    requestId: varchar("request_id", { length: 128 }),
    metadata: jsonb("metadata").$type<Record<string, unknown>>().notNull().default({}),
  },
  (t) => [index("certificate_audit_logs_org_idx").on(t.organizationId, t.createdAt, t.id)],
);

/** Each organization's current key revocation list, rebuilt whenever a certificate is revoked. */
export const orgKrls = pgTable("org_krls", {
  organizationId: uuid("organization_id")
    .primaryKey()
    .references(() => organizations.id),
  version: bigint("version", { mode: "bigint" }).notNull(),
  krl: bytea("krl").notNull(),
  generatedAt: tstz("generated_at").notNull(),
});
