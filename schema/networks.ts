import { sql } from "drizzle-orm";
import { boolean, char, index, integer, jsonb, pgEnum, pgTable, primaryKey, text, uniqueIndex, uuid, varchar } from "drizzle-orm/pg-core";
import { createdAt, deletedAt, id, tstz, updatedAt } from "./_columns.js";
import { organizations } from "./orgs.js";
import { users } from "./users.js";

/**
 * Governed access to overlay networks run by a ZeroTier controller. Keyward records the intent
 * (who may be on which network until when); the controller is brought in line with it at once
 * and, whatever failed meanwhile, by the reconciliation job.
 */

export const controllerMode = pgEnum("network_controller_mode", ["controller", "central"]);
export const networkEnvironment = pgEnum("network_environment", ["production", "staging", "development", "lab"]);
export const networkRequestMode = pgEnum("network_request_mode", ["open", "approval_required", "invite_only"]);
export const deviceStatus = pgEnum("device_status", ["active", "inactive"]);
export const approvalGrantType = pgEnum("network_approval_grant_type", ["requested", "assigned"]);
export const approvalState = pgEnum("network_approval_state", ["pending", "approved", "rejected", "revoked", "suspended"]);
export const membershipState = pgEnum("device_membership_state", [
  "pending_device_registration",
  "pending_request",
  "pending_manager_approval",
  "approved_inactive",
  "joined_deauthorized",
  "active_authorized",
  "activation_expired",
  "suspended",
  "revoked",
  "rejected",
]);
export const activationEndReason = pgEnum("activation_end_reason", ["expired", "logout", "kill_switch", "manual_revoke", "approval_revoked", "admin_action"]);
export const killSwitchScope = pgEnum("kill_switch_scope", ["organization", "global", "selected_networks"]);

/** One controller connection per organization; the token is sealed (AAD binds it to the organization). */
export const networkControllers = pgTable("network_controllers", {
  organizationId: uuid("organization_id")
    .primaryKey()
    .references(() => organizations.id),
  mode: controllerMode("mode").notNull(),
  baseUrl: text("base_url").notNull(),
  tokenSealed: text("token_sealed").notNull(),
  controllerAddress: varchar("controller_address", { length: 10 }),
  lastCheckedAt: tstz("last_checked_at"),
  updatedBy: uuid("updated_by").references(() => users.id),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const portalNetworks = pgTable(
  "portal_networks",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    name: varchar("name", { length: 255 }).notNull(),
    description: text("description"),
    ownerUserId: uuid("owner_user_id").references(() => users.id),
    zerotierNetworkId: char("zerotier_network_id", { length: 16 }).notNull(),
    environment: networkEnvironment("environment").notNull().default("production"),
    requestMode: networkRequestMode("request_mode").notNull().default("approval_required"),
    defaultActivationLifetimeMinutes: integer("default_activation_lifetime_minutes").notNull().default(480),
    maxActivationLifetimeMinutes: integer("max_activation_lifetime_minutes"),
    isActive: boolean("is_active").notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    /** Soft delete. Until `cleanedUpAt`, reconciliation still deauthorizes what Keyward authorized there. */
    deletedAt: deletedAt(),
    cleanedUpAt: tstz("cleaned_up_at"),
  },
  (t) => [uniqueIndex("portal_networks_org_ztid_live_uq").on(t.organizationId, t.zerotierNetworkId).where(sql`${t.deletedAt} is null`)],
);

/** People an organization names as a network's managers (besides its owners and admins). */
export const networkManagers = pgTable(
  "network_managers",
  {
    portalNetworkId: uuid("portal_network_id")
      .notNull()
      .references(() => portalNetworks.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    createdBy: uuid("created_by").references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.portalNetworkId, t.userId] })],
);

export const devices = pgTable(
  "devices",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    nodeId: char("node_id", { length: 10 }).notNull(),
    nickname: varchar("nickname", { length: 255 }),
    hostname: varchar("hostname", { length: 255 }),
    assetTag: varchar("asset_tag", { length: 255 }),
    serialNumber: varchar("serial_number", { length: 255 }),
    status: deviceStatus("status").notNull().default("active"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [
    uniqueIndex("devices_org_node_live_uq").on(t.organizationId, t.nodeId).where(sql`${t.deletedAt} is null`),
    index("devices_user_idx").on(t.userId),
  ],
);

/** A person's standing on a network (UserNetworkApproval): at most one live one per person and network. */
export const networkApprovals = pgTable(
  "network_approvals",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    portalNetworkId: uuid("portal_network_id")
      .notNull()
      .references(() => portalNetworks.id),
    grantType: approvalGrantType("grant_type").notNull(),
    state: approvalState("state").notNull(),
    justification: text("justification"),
    grantedByUserId: uuid("granted_by_user_id").references(() => users.id),
    decidedAt: tstz("decided_at"),
    decisionReason: text("decision_reason"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("network_approvals_user_network_live_uq")
      .on(t.userId, t.portalNetworkId)
      .where(sql`${t.state} in ('pending', 'approved', 'suspended')`),
    index("network_approvals_network_state_idx").on(t.portalNetworkId, t.state),
  ],
);

/**
 * One device on one network (DeviceNetworkMembership). `currentlyAuthorized` is what Keyward last
 * confirmed at the controller; the desired state is "has an unexpired activation".
 */
export const deviceMemberships = pgTable(
  "device_memberships",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    deviceId: uuid("device_id")
      .notNull()
      .references(() => devices.id),
    portalNetworkId: uuid("portal_network_id")
      .notNull()
      .references(() => portalNetworks.id),
    approvalId: uuid("approval_id").references(() => networkApprovals.id),
    state: membershipState("state").notNull(),
    joinSeen: boolean("join_seen").notNull().default(false),
    currentlyAuthorized: boolean("currently_authorized").notNull().default(false),
    lastSyncedAt: tstz("last_synced_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: deletedAt(),
  },
  (t) => [
    uniqueIndex("device_memberships_device_network_live_uq").on(t.deviceId, t.portalNetworkId).where(sql`${t.deletedAt} is null`),
    index("device_memberships_network_idx").on(t.portalNetworkId),
    index("device_memberships_user_idx").on(t.userId),
  ],
);

export const activationSessions = pgTable(
  "activation_sessions",
  {
    id: id(),
    organizationId: uuid("organization_id")
      .notNull()
      .references(() => organizations.id),
    membershipId: uuid("membership_id")
      .notNull()
      .references(() => deviceMemberships.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    authenticatedAt: tstz("authenticated_at").notNull(),
    expiresAt: tstz("expires_at").notNull(),
    endedAt: tstz("ended_at"),
    endReason: activationEndReason("end_reason"),
    createdBy: uuid("created_by").references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [
    // One running activation per device membership.
    uniqueIndex("activation_sessions_membership_open_uq").on(t.membershipId).where(sql`${t.endedAt} is null`),
    index("activation_sessions_open_expiry_idx").on(t.expiresAt).where(sql`${t.endedAt} is null`),
  ],
);

export const killSwitchEvents = pgTable(
  "kill_switch_events",
  {
    id: id(),
    /** Null for a global kill switch (superadmins). */
    organizationId: uuid("organization_id").references(() => organizations.id),
    targetUserId: uuid("target_user_id")
      .notNull()
      .references(() => users.id),
    scope: killSwitchScope("scope").notNull(),
    networkIds: jsonb("network_ids").$type<string[]>(),
    reason: text("reason"),
    triggeredByUserId: uuid("triggered_by_user_id").references(() => users.id),
    sessionsEnded: integer("sessions_ended").notNull().default(0),
    createdAt: createdAt(),
    liftedAt: tstz("lifted_at"),
    liftedByUserId: uuid("lifted_by_user_id").references(() => users.id),
  },
  (t) => [index("kill_switch_events_target_idx").on(t.targetUserId)],
);

/**
 * Cluster-wide leases for jobs that must run once per tick whatever the number of instances
 * (a row, not an advisory lock: no connection is held while the job talks to a controller).
 */
export const jobLeases = pgTable("job_leases", {
  name: varchar("name", { length: 100 }).primaryKey(),
  holder: varchar("holder", { length: 100 }).notNull(),
  expiresAt: tstz("expires_at").notNull(),
  lastRunAt: tstz("last_run_at"),
});
