import { sql } from "drizzle-orm";
import { index, pgTable, text, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, deletedAt, id, tstz, updatedAt } from "./_columns.js";
import { organizations } from "./orgs.js";
import { users } from "./users.js";

/** Organization API keys: the secret is shown once; only its SHA-256 is kept. */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    name: varchar("name", { length: 255 }).notNull(),
    description: text("description"),
    /** The non-secret start of the key ("kwk_ab12cd34"), shown in lists so a key can be recognised. */
    prefix: varchar("prefix", { length: 32 }).notNull(),
    keyHash: varchar("key_hash", { length: 64 }).notNull().unique(),
    /**
     * What the key may do (src/lib/api-key-scopes.ts). Keys made before scopes existed could only
     * answer the sudo check, so that is what they (and a row written without scopes) hold.
     */
    scopes: text("scopes").array().notNull().default(sql`'{ssh:sudo}'::text[]`),
    createdBy: uuid("created_by").references(() => users.id),
    lastUsedAt: tstz("last_used_at"),
    revokedAt: tstz("revoked_at"),
    revokeReason: text("revoke_reason"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [index("api_keys_org_idx").on(t.organizationId)],
);
