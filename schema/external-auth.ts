import { sql } from "drizzle-orm";
import { boolean, pgEnum, pgTable, text, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, id, tstz, updatedAt } from "./_columns.js";
import { users } from "./users.js";

/** The external identity providers Keyward signs people in with. */
export const externalProvider = pgEnum("external_provider", ["github", "google"]);

/**
 * An account at GitHub or Google linked to a Keyward user. The provider's stable subject is the
 * key (never the email, which can change hands): one identity belongs to one account, and an
 * account links at most one identity per provider.
 */
export const externalIdentities = pgTable(
  "external_identities",
  {
    id: id(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    provider: externalProvider("provider").notNull(),
    subject: varchar("subject", { length: 255 }).notNull(),
    /** As the provider last reported them (display only: authorization never relies on them). */
    email: varchar("email", { length: 320 }),
    emailVerified: boolean("email_verified").notNull().default(false),
    username: varchar("username", { length: 255 }),
    displayName: varchar("display_name", { length: 255 }),
    avatarUrl: text("avatar_url"),
    createdAt: createdAt(),
    lastUsedAt: tstz("last_used_at"),
  },
  (t) => [
    uniqueIndex("external_identities_subject_uq").on(t.provider, t.subject),
    uniqueIndex("external_identities_user_provider_uq").on(t.userId, t.provider),
  ],
);

/**
 * Superadmin-managed provider settings; environment variables are the fallback when no row exists.
 * The client secret is sealed at rest (AES-256-GCM, bound to the provider name).
 */
export const oauthProviderConfigs = pgTable("oauth_provider_configs", {
  provider: externalProvider("provider").primaryKey(),
  clientId: varchar("client_id", { length: 255 }).notNull(),
  clientSecretSealed: text("client_secret_sealed").notNull(),
  scopes: text("scopes").array().notNull().default(sql`'{}'::text[]`),
  isEnabled: boolean("is_enabled").notNull().default(true),
  updatedBy: uuid("updated_by").references(() => users.id),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});
