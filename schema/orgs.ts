import { sql } from "drizzle-orm";
import { boolean, index, integer, pgEnum, pgTable, pgView, primaryKey, text, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, deletedAt, id, tstz, updatedAt } from "./_columns.js";
import { users } from "./users.js";

export const orgRole = pgEnum("org_role", ["owner", "admin", "member", "guest"]);

export const organizations = pgTable(
  "organizations",
  {
    id: id(),
    name: varchar("name", { length: 255 }).notNull(),
    slug: varchar("slug", { length: 255 }).notNull(),
    description: text("description"),
    logoUrl: text("logo_url"),
    createdBy: uuid("created_by").references(() => users.id),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [uniqueIndex("organizations_slug_live_uq").on(t.slug).where(sql`${t.deletedAt} is null`)],
);

export const orgMemberships = pgTable(
  "org_memberships",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    role: orgRole("role").notNull(),
    invitedBy: uuid("invited_by").references(() => users.id),
    joinedAt: tstz("joined_at").notNull().defaultNow(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [
    uniqueIndex("org_memberships_org_user_live_uq").on(t.organizationId, t.userId).where(sql`${t.deletedAt} is null`),
    index("org_memberships_user_idx").on(t.userId),
  ],
);

/**
 * The one definition of "which organizations is this user in": live memberships of live
 * organizations. getActiveMemberships() and the per-user organization limit both read it.
 */
export const activeMemberships = pgView("active_memberships").as((qb) =>
  qb
    .select({
      membershipId: sql<string>`${orgMemberships.id}`.as("membership_id"),
      userId: orgMemberships.userId,
      organizationId: orgMemberships.organizationId,
      role: orgMemberships.role,
      joinedAt: orgMemberships.joinedAt,
      organizationName: sql<string>`${organizations.name}`.as("organization_name"),
      organizationSlug: sql<string>`${organizations.slug}`.as("organization_slug"),
    })
    .from(orgMemberships)
    .innerJoin(organizations, sql`${organizations.id} = ${orgMemberships.organizationId}`)
    .where(sql`${orgMemberships.deletedAt} is null and ${organizations.deletedAt} is null`),
);

export const orgInvites = pgTable(
  "org_invites",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    email: varchar("email", { length: 320 }).notNull(),
    role: orgRole("role").notNull().default("member"),
    tokenHash: varchar("token_hash", { length: 64 }).notNull().unique(),
    invitedBy: uuid("invited_by")
      .notNull()
      .references(() => users.id),
    expiresAt: tstz("expires_at").notNull(),
    acceptedAt: tstz("accepted_at"),
    acceptedBy: uuid("accepted_by").references(() => users.id),
    cancelledAt: tstz("cancelled_at"),
    /**
     * Sent by "add member" to an address with no account: accepting it creates the account as one
     * this organization manages. An address that has an account by then joins as itself.
     */
    provisionsAccount: boolean("provisions_account").notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    // One open invite per address and organization.
    uniqueIndex("org_invites_open_uq").on(t.organizationId, t.email).where(sql`${t.acceptedAt} is null and ${t.cancelledAt} is null`),
    index("org_invites_email_idx").on(t.email),
  ],
);

export const departments = pgTable(
  "departments",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    name: varchar("name", { length: 255 }).notNull(),
    description: text("description"),
    canSudo: boolean("can_sudo").notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [uniqueIndex("departments_org_name_live_uq").on(t.organizationId, t.name).where(sql`${t.deletedAt} is null`)],
);

export const departmentMembers = pgTable(
  "department_members",
  {
    departmentId: uuid("department_id")
      .notNull()
      .references(() => departments.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
    /**
     * The SSO connection whose group mapping put the person here (null: added by hand). Only such
     * memberships are taken away when the connection's mappings stop granting them. No foreign key:
     * schema/sso.ts already imports this file, and connections are only ever soft-deleted.
     */
    grantedByConnectionId: uuid("granted_by_connection_id"),
  },
  (t) => [primaryKey({ columns: [t.departmentId, t.userId] }), index("department_members_user_idx").on(t.userId)],
);

export const principals = pgTable(
  "principals",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    name: varchar("name", { length: 255 }).notNull(),
    description: text("description"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [uniqueIndex("principals_org_name_live_uq").on(t.organizationId, t.name).where(sql`${t.deletedAt} is null`)],
);

export const principalMembers = pgTable(
  "principal_members",
  {
    principalId: uuid("principal_id")
      .notNull()
      .references(() => principals.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.principalId, t.userId] }), index("principal_members_user_idx").on(t.userId)],
);

export const departmentPrincipals = pgTable(
  "department_principals",
  {
    departmentId: uuid("department_id")
      .notNull()
      .references(() => departments.id),
    principalId: uuid("principal_id")
      .notNull()
      .references(() => principals.id),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.departmentId, t.principalId] }), index("department_principals_principal_idx").on(t.principalId)],
);

/** Certificate policy of a department: applied when its members sign SSH certificates. */
export const departmentCertPolicies = pgTable("department_cert_policies", {
  departmentId: uuid("department_id")
    .primaryKey()
    .references(() => departments.id),
  allowUserExpiry: boolean("allow_user_expiry").notNull().default(false),
  defaultExpiryHours: integer("default_expiry_hours").notNull().default(1),
  maxExpiryHours: integer("max_expiry_hours").notNull().default(24),
  allowedExtensions: text("allowed_extensions").array().notNull(),
  customExtensions: text("custom_extensions").array().notNull().default(sql`'{}'::text[]`),
  /** Only FIDO2 security keys (sk-ssh-ed25519, sk-ecdsa-sha2-nistp256) are certified. */
  requireHardwareKey: boolean("require_hardware_key").notNull().default(false),
  /** A security key whose proof showed a touch; its certificates never carry no-touch-required. */
  requireTouch: boolean("require_touch").notNull().default(false),
  /** A security key whose proof showed PIN/biometric verification; its certificates carry verify-required. */
  requireVerify: boolean("require_verify").notNull().default(false),
  updatedAt: updatedAt(),
});
