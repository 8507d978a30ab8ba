import { activationSessions, deviceMemberships, devices, killSwitchEvents, networkApprovals, networkControllers, portalNetworks, users } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";

/**
 * The networks module's tables as its repositories read them: named columns and the row types
 * inferred from them. The queries live in one repository per aggregate: controller (and the
 * privileged controller-token), portal-networks, devices, approvals, device-memberships,
 * activation-sessions, kill-switch and leases.
 */

/** A controller connection as every ordinary read sees it: without the sealed token. */
export const controllerColumns = pickColumns(networkControllers, ["organizationId", "mode", "baseUrl", "controllerAddress", "lastCheckedAt", "updatedBy", "createdAt", "updatedAt"]);
export type ControllerRow = Pick<typeof networkControllers.$inferSelect, keyof typeof controllerColumns>;

export const portalNetworkColumns = pickColumns(portalNetworks, [
  "id", "organizationId", "name", "description", "ownerUserId", "zerotierNetworkId", "environment", "requestMode", "defaultActivationLifetimeMinutes",
  "maxActivationLifetimeMinutes", "isActive", "createdAt", "updatedAt", "deletedAt", "cleanedUpAt",
]);
export type PortalNetworkRow = Pick<typeof portalNetworks.$inferSelect, keyof typeof portalNetworkColumns>;

export const deviceColumns = pickColumns(devices, ["id", "organizationId", "userId", "nodeId", "nickname", "hostname", "assetTag", "serialNumber", "status", "createdAt", "updatedAt", "deletedAt"]);
export type DeviceRow = Pick<typeof devices.$inferSelect, keyof typeof deviceColumns>;

export const approvalColumns = pickColumns(networkApprovals, ["id", "organizationId", "userId", "portalNetworkId", "grantType", "state", "justification", "grantedByUserId", "decidedAt", "decisionReason", "createdAt", "updatedAt"]);
export type ApprovalRow = Pick<typeof networkApprovals.$inferSelect, keyof typeof approvalColumns>;

export const membershipColumns = pickColumns(deviceMemberships, ["id", "organizationId", "userId", "deviceId", "portalNetworkId", "approvalId", "state", "joinSeen", "currentlyAuthorized", "lastSyncedAt", "createdAt", "updatedAt", "deletedAt"]);
export type MembershipRow = Pick<typeof deviceMemberships.$inferSelect, keyof typeof membershipColumns>;

export const sessionColumns = pickColumns(activationSessions, ["id", "organizationId", "membershipId", "userId", "authenticatedAt", "expiresAt", "endedAt", "endReason", "createdBy", "createdAt"]);
export type SessionRow = Pick<typeof activationSessions.$inferSelect, keyof typeof sessionColumns>;

export const killSwitchColumns = pickColumns(killSwitchEvents, ["id", "organizationId", "targetUserId", "scope", "networkIds", "reason", "triggeredByUserId", "sessionsEnded", "createdAt", "liftedAt", "liftedByUserId"]);
export type KillSwitchRow = Pick<typeof killSwitchEvents.$inferSelect, keyof typeof killSwitchColumns>;

/** What a listing shows beside a membership or its activation: the device, its owner and the network (joined by the query). */
export const listingColumns = { nodeId: devices.nodeId, deviceNickname: devices.nickname, ownerEmail: users.email, ownerName: users.fullName, networkName: portalNetworks.name };

export type MembershipState = MembershipRow["state"];
export type EndReason = NonNullable<SessionRow["endReason"]>;
