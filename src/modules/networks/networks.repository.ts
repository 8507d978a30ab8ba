import { activationSessions, deviceMemberships, devices, killSwitchEvents, networkApprovals, networkControllers, portalNetworks } from "../../../schema/index.js";

/**
 * The networks module's tables as its repositories read them: named columns and the row types
 * inferred from them. The queries live in one repository per aggregate: controller (and the
 * privileged controller-token), portal-networks, devices, approvals, device-memberships,
 * activation-sessions, kill-switch and leases.
 */

/** A controller connection as every ordinary read sees it: without the sealed token. */
export const controllerColumns = {
  organizationId: networkControllers.organizationId,
  mode: networkControllers.mode,
  baseUrl: networkControllers.baseUrl,
  controllerAddress: networkControllers.controllerAddress,
  lastCheckedAt: networkControllers.lastCheckedAt,
  updatedBy: networkControllers.updatedBy,
  createdAt: networkControllers.createdAt,
  updatedAt: networkControllers.updatedAt,
};
export type ControllerRow = { [K in keyof typeof controllerColumns]: (typeof networkControllers.$inferSelect)[K] };

export const portalNetworkColumns = {
  id: portalNetworks.id,
  organizationId: portalNetworks.organizationId,
  name: portalNetworks.name,
  description: portalNetworks.description,
  ownerUserId: portalNetworks.ownerUserId,
  zerotierNetworkId: portalNetworks.zerotierNetworkId,
  environment: portalNetworks.environment,
  requestMode: portalNetworks.requestMode,
  defaultActivationLifetimeMinutes: portalNetworks.defaultActivationLifetimeMinutes,
  maxActivationLifetimeMinutes: portalNetworks.maxActivationLifetimeMinutes,
  isActive: portalNetworks.isActive,
  createdAt: portalNetworks.createdAt,
  updatedAt: portalNetworks.updatedAt,
  deletedAt: portalNetworks.deletedAt,
  cleanedUpAt: portalNetworks.cleanedUpAt,
};
export type PortalNetworkRow = { [K in keyof typeof portalNetworkColumns]: (typeof portalNetworks.$inferSelect)[K] };

export const deviceColumns = {
  id: devices.id,
  organizationId: devices.organizationId,
  userId: devices.userId,
  nodeId: devices.nodeId,
  nickname: devices.nickname,
  hostname: devices.hostname,
  assetTag: devices.assetTag,
  serialNumber: devices.serialNumber,
  status: devices.status,
  createdAt: devices.createdAt,
  updatedAt: devices.updatedAt,
  deletedAt: devices.deletedAt,
};
export type DeviceRow = { [K in keyof typeof deviceColumns]: (typeof devices.$inferSelect)[K] };

export const approvalColumns = {
  id: networkApprovals.id,
  organizationId: networkApprovals.organizationId,
  userId: networkApprovals.userId,
  portalNetworkId: networkApprovals.portalNetworkId,
  grantType: networkApprovals.grantType,
  state: networkApprovals.state,
  justification: networkApprovals.justification,
  grantedByUserId: networkApprovals.grantedByUserId,
  decidedAt: networkApprovals.decidedAt,
  decisionReason: networkApprovals.decisionReason,
  createdAt: networkApprovals.createdAt,
  updatedAt: networkApprovals.updatedAt,
};
export type ApprovalRow = { [K in keyof typeof approvalColumns]: (typeof networkApprovals.$inferSelect)[K] };

export const membershipColumns = {
  id: deviceMemberships.id,
  organizationId: deviceMemberships.organizationId,
  userId: deviceMemberships.userId,
  deviceId: deviceMemberships.deviceId,
  portalNetworkId: deviceMemberships.portalNetworkId,
  approvalId: deviceMemberships.approvalId,
  state: deviceMemberships.state,
  joinSeen: deviceMemberships.joinSeen,
  currentlyAuthorized: deviceMemberships.currentlyAuthorized,
  lastSyncedAt: deviceMemberships.lastSyncedAt,
  createdAt: deviceMemberships.createdAt,
  updatedAt: deviceMemberships.updatedAt,
  deletedAt: deviceMemberships.deletedAt,
};
export type MembershipRow = { [K in keyof typeof membershipColumns]: (typeof deviceMemberships.$inferSelect)[K] };

export const sessionColumns = {
  id: activationSessions.id,
  organizationId: activationSessions.organizationId,
  membershipId: activationSessions.membershipId,
  userId: activationSessions.userId,
  authenticatedAt: activationSessions.authenticatedAt,
  expiresAt: activationSessions.expiresAt,
  endedAt: activationSessions.endedAt,
  endReason: activationSessions.endReason,
  createdBy: activationSessions.createdBy,
  createdAt: activationSessions.createdAt,
};
export type SessionRow = { [K in keyof typeof sessionColumns]: (typeof activationSessions.$inferSelect)[K] };

export const killSwitchColumns = {
  id: killSwitchEvents.id,
  organizationId: killSwitchEvents.organizationId,
  targetUserId: killSwitchEvents.targetUserId,
  scope: killSwitchEvents.scope,
  networkIds: killSwitchEvents.networkIds,
  reason: killSwitchEvents.reason,
  triggeredByUserId: killSwitchEvents.triggeredByUserId,
  sessionsEnded: killSwitchEvents.sessionsEnded,
  createdAt: killSwitchEvents.createdAt,
  liftedAt: killSwitchEvents.liftedAt,
  liftedByUserId: killSwitchEvents.liftedByUserId,
};
export type KillSwitchRow = { [K in keyof typeof killSwitchColumns]: (typeof killSwitchEvents.$inferSelect)[K] };

export type MembershipState = MembershipRow["state"];
export type EndReason = NonNullable<SessionRow["endReason"]>;
