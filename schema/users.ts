import { sql } from "drizzle-orm";
import { boolean, index, pgEnum, pgTable, text, uniqueIndex, uuid, varchar, type AnyPgColumn } from "drizzle-orm/pg-core";
import { createdAt, deletedAt, id, tstz, updatedAt } from "./_columns.js";
import { organizations } from "./orgs.js";

/**
 * pending_activation: created by an organization admin before admins could only provision through
 * an invitation (no longer created; kept for accounts made that way, which activate by their link).
 */
export const userStatus = pgEnum("user_status", ["active", "suspended", "pending_activation"]);

/**
 * How the owner proved the address: a link mailed to it (verification, reset, activation or invite
 * link), a provider's verified claim, or a superadmin's audited word. Null with a verified address:
 * verified before provenance was recorded.
 */
export const emailVerifiedVia = pgEnum("email_verified_via", ["email_link", "provider", "superadmin"]);

export const users = pgTable(
  "users",
  {
    id: id(),
    /** Stored lower-cased; unique among accounts that are not deleted. */
    email: varchar("email", { length: 320 }).notNull(),
    fullName: varchar("full_name", { length: 255 }),
    avatarUrl: text("avatar_url"),
    emailVerifiedAt: tstz("email_verified_at"),
    emailVerifiedVia: emailVerifiedVia("email_verified_via"),
    status: userStatus("status").notNull().default("active"),
    isSuperadmin: boolean("is_superadmin").notNull().default(false),
    suspendedAt: tstz("suspended_at"),
    suspendedReason: text("suspended_reason"),
    lastLoginAt: tstz("last_login_at"),
    lastLoginIp: varchar("last_login_ip", { length: 45 }),
    /**
     * The organization that provisioned this account and administers its credentials (null: the
     * account is its owner's alone). Cleared when the account leaves that organization.
     */
    managedByOrganizationId: uuid("managed_by_organization_id").references((): AnyPgColumn => organizations.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [
    uniqueIndex("users_email_live_uq").on(t.email).where(sql`${t.deletedAt} is null`),
    index("users_managed_by_idx").on(t.managedByOrganizationId).where(sql`${t.managedByOrganizationId} is not null`),
  ],
);

/** Password hashes live apart from users so that only the auth services ever read them. */
export const passwordCredentials = pgTable("password_credentials", {
  userId: uuid("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  passwordHash: text("password_hash").notNull(),
  updatedAt: updatedAt(),
});

/** email_change: the link sent to a new address; the account's address changes when it is opened. */
export const userTokenPurpose = pgEnum("user_token_purpose", ["email_verification", "password_reset", "activation", "email_change"]);

/** Single-use links sent by email; only the SHA-256 of the token is stored. */
export const userTokens = pgTable(
  "user_tokens",
  {
    id: id(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    purpose: userTokenPurpose("purpose").notNull(),
    tokenHash: varchar("token_hash", { length: 64 }).notNull().unique(),
    /** The address an email_change link proves (lower-cased); null for every other purpose. */
    newEmail: varchar("new_email", { length: 320 }),
    expiresAt: tstz("expires_at").notNull(),
    usedAt: tstz("used_at"),
    createdAt: createdAt(),
  },
  (t) => [index("user_tokens_user_purpose_idx").on(t.userId, t.purpose)],
);
