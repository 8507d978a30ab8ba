import { sql } from "drizzle-orm";
import { index, integer, pgTable, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./_columns.js";
import { departments, organizations } from "./orgs.js";
import { users } from "./users.js";

/**
 * What a SCIM client (Okta, Entra ID) said about a managed account of its organization beyond the
 * account itself (issue 36): its id at the client, the parts of its name, a version for weak ETags.
 * One row per account, pinned to the organization whose API key wrote it.
 */
export const scimUsers = pgTable(
  "scim_users",
  {
    userId: uuid("user_id")
      .primaryKey()
      .references(() => users.id, { onDelete: "cascade" }),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    externalId: varchar("external_id", { length: 255 }),
    givenName: varchar("given_name", { length: 255 }),
    familyName: varchar("family_name", { length: 255 }),
    displayName: varchar("display_name", { length: 255 }),
    /**
     * The department the client's enterprise `department` put the person in (issue 36): the
     * membership it added, taken away again when the client names another department or none.
     */
    departmentId: uuid("department_id").references(() => departments.id, { onDelete: "set null" }),
    /** The enterprise `manager`: another managed account of the same organization. */
    managerId: uuid("manager_id").references(() => users.id, { onDelete: "set null" }),
    /** Bumped by every change through SCIM: the weak ETag `W/"<version>"`. */
    version: integer("version").notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("scim_users_org_external_uq").on(t.organizationId, t.externalId).where(sql`${t.externalId} is not null`),
    index("scim_users_org_idx").on(t.organizationId),
  ],
);
