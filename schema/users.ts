import { sql } from "drizzle-orm";
import { boolean, index, pgEnum, pgTable, text, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, deletedAt, id, tstz, updatedAt } from "./_columns.js";

/** pending_activation: created by an organization admin, waiting for its owner to set a password. */
export const userStatus = pgEnum("user_status", ["active", "suspended", "pending_activation"]);

export const users = pgTable(
  "users",
  {
    id: id(),
    /** Stored lower-cased; unique among accounts that are not deleted. */
    email: varchar("email", { length: 320 }).notNull(),
    fullName: varchar("full_name", { length: 255 }),
    avatarUrl: text("avatar_url"),
    emailVerifiedAt: tstz("email_verified_at"),
    status: userStatus("status").notNull().default("active"),
    isSuperadmin: boolean("is_superadmin").notNull().default(false),
    suspendedAt: tstz("suspended_at"),
    suspendedReason: text("suspended_reason"),
    lastLoginAt: tstz("last_login_at"),
    lastLoginIp: varchar("last_login_ip", { length: 45 }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [uniqueIndex("users_email_live_uq").on(t.email).where(sql`${t.deletedAt} is null`)],
);

/** Password hashes live apart from users so that only the auth services ever read them. */
export const passwordCredentials = pgTable("password_credentials", {
  userId: uuid("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  passwordHash: text("password_hash").notNull(),
  updatedAt: updatedAt(),
});

export const userTokenPurpose = pgEnum("user_token_purpose", ["email_verification", "password_reset", "activation"]);

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
    expiresAt: tstz("expires_at").notNull(),
    usedAt: tstz("used_at"),
    createdAt: createdAt(),
  },
  (t) => [index("user_tokens_user_purpose_idx").on(t.userId, t.purpose)],
);
