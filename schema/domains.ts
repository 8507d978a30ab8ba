import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, text, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, deletedAt, id, tstz, updatedAt } from "./_columns.js";
import { organizations } from "./orgs.js";
import { users } from "./users.js";

/**
 * Domains an organization claims, and proves by a DNS TXT record (`keyward-verification=<token>` at
 * `_keyward-verification.<domain>`). Several organizations may hold a pending claim on one name; a
 * name is verified for one organization at most (the partial unique index), so an address in it
 * routes to that organization only.
 */
export const organizationDomains = pgTable(
  "organization_domains",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    /** Lower case, IDNA A-label form (xn--…), no trailing dot. */
    domain: varchar("domain", { length: 253 }).notNull(),
    /** The challenge: random, public (it is published in DNS), never reused across claims. */
    verificationToken: varchar("verification_token", { length: 64 }).notNull().unique("organization_domains_token_uq"),
    /** pending: not proved yet; verified: proved and still published; lapsed: the record went missing. */
    status: varchar("status", { length: 16 }).notNull().default("pending"),
    verifiedAt: tstz("verified_at"),
    lastCheckedAt: tstz("last_checked_at"),
    /** Why the last check did not find the record (shown to the admin); null after a good check. */
    lastCheckError: text("last_check_error"),
    /** Checks in a row that did not find the record on a verified domain (it lapses at a threshold). */
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    /** When the periodic re-check looks again (verified domains only). */
    nextCheckAt: tstz("next_check_at"),
    createdBy: uuid("created_by").references(() => users.id),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [
    // A domain belongs to one organization at most: one live verified row per name.
    uniqueIndex("organization_domains_verified_uq").on(t.domain).where(sql`${t.status} = 'verified' and ${t.deletedAt} is null`),
    // One live claim per organization and name.
    uniqueIndex("organization_domains_org_domain_uq").on(t.organizationId, t.domain).where(sql`${t.deletedAt} is null`),
    index("organization_domains_due_idx").on(t.nextCheckAt).where(sql`${t.status} = 'verified' and ${t.deletedAt} is null`),
    check("organization_domains_status_ck", sql`${t.status} in ('pending', 'verified', 'lapsed')`),
  ],
);
