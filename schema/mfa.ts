import { sql } from "drizzle-orm";
import { bigint, boolean, index, integer, pgEnum, pgTable, primaryKey, text, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, deletedAt, id, tstz, updatedAt } from "./_columns.js";
import { organizations } from "./orgs.js";
import { users } from "./users.js";

/** WebAuthn credentials (passkeys and security keys). The public key is not secret but is privileged. */
export const webauthnCredentials = pgTable(
  "webauthn_credentials",
  {
    id: id(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    credentialId: varchar("credential_id", { length: 1024 }).notNull(),
    publicKey: text("public_key").notNull(),
    counter: bigint("counter", { mode: "number" }).notNull().default(0),
    transports: text("transports").array().notNull().default(sql`'{}'::text[]`),
    deviceType: varchar("device_type", { length: 32 }).notNull(),
    backedUp: boolean("backed_up").notNull().default(false),
    aaguid: varchar("aaguid", { length: 64 }),
    name: varchar("name", { length: 255 }).notNull(),
    lastUsedAt: tstz("last_used_at"),
    createdAt: createdAt(),
    deletedAt: deletedAt(),
  },
  (t) => [
    uniqueIndex("webauthn_credentials_credential_live_uq").on(t.credentialId).where(sql`${t.deletedAt} is null`),
    index("webauthn_credentials_user_idx").on(t.userId),
  ],
);

/** A user's TOTP authenticator: the seed sealed at rest; the last step used, so a code works once. */
export const totpFactors = pgTable("totp_factors", {
  userId: uuid("user_id")
    .primaryKey()
    .references(() => users.id),
  secretSealed: text("secret_sealed").notNull(),
  verifiedAt: tstz("verified_at"),
  lastUsedStep: bigint("last_used_step", { mode: "number" }).notNull().default(0),
  createdAt: createdAt(),
});

/** One-time backup codes, stored as keyed hashes. */
export const backupCodes = pgTable(
  "backup_codes",
  {
    id: id(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    /** "<key id>:<HMAC-SHA256 hex>" */
    codeHash: varchar("code_hash", { length: 96 }).notNull(),
    usedAt: tstz("used_at"),
    createdAt: createdAt(),
  },
  (t) => [index("backup_codes_user_idx").on(t.userId)],
);

export const mfaPolicyMode = pgEnum("mfa_policy_mode", ["disabled", "optional", "required"]);

export const orgSecurityPolicies = pgTable("org_security_policies", {
  organizationId: uuid("organization_id")
    .primaryKey()
    .references(() => organizations.id),
  mfaPolicyMode: mfaPolicyMode("mfa_policy_mode").notNull().default("optional"),
  mfaGracePeriodDays: integer("mfa_grace_period_days").notNull().default(14),
  notifyDaysBefore: integer("notify_days_before").notNull().default(7),
  policyVersion: integer("policy_version").notNull().default(1),
  updatedBy: uuid("updated_by").references(() => users.id),
  updatedAt: updatedAt(),
});

export const mfaComplianceStatus = pgEnum("mfa_compliance_status", ["not_applicable", "in_grace", "compliant", "past_due"]);

/** Each member's standing under their organization's MFA policy. */
export const mfaCompliance = pgTable(
  "mfa_compliance",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    status: mfaComplianceStatus("status").notNull(),
    policyVersion: integer("policy_version").notNull(),
    deadlineAt: tstz("deadline_at"),
    compliantAt: tstz("compliant_at"),
    remindersSent: text("reminders_sent").array().notNull().default(sql`'{}'::text[]`),
    lastNotifiedAt: tstz("last_notified_at"),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.organizationId] }), index("mfa_compliance_org_idx").on(t.organizationId, t.status)],
);
