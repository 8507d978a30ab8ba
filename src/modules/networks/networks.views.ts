import type { ApprovalRow, DeviceRow, KillSwitchRow, MembershipRow, PortalNetworkRow, SessionRow } from "./networks.repository.js";

export interface PortalNetworkView {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  ownerUserId: string | null;
  zerotierNetworkId: string;
  environment: PortalNetworkRow["environment"];
  requestMode: PortalNetworkRow["requestMode"];
  defaultActivationLifetimeMinutes: number;
  maxActivationLifetimeMinutes: number | null;
  isActive: boolean;
  approvedUserCount: number;
  activeMembershipCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export const toNetworkView = (n: PortalNetworkRow, counts = { approved: 0, active: 0 }): PortalNetworkView => ({
  id: n.id,
  organizationId: n.organizationId,
  name: n.name,
  description: n.description,
  ownerUserId: n.ownerUserId,
  zerotierNetworkId: n.zerotierNetworkId,
  environment: n.environment,
  requestMode: n.requestMode,
  defaultActivationLifetimeMinutes: n.defaultActivationLifetimeMinutes,
  maxActivationLifetimeMinutes: n.maxActivationLifetimeMinutes,
  isActive: n.isActive,
  approvedUserCount: counts.approved,
  activeMembershipCount: counts.active,
  createdAt: n.createdAt,
  updatedAt: n.updatedAt,
});

export interface DeviceView {
  id: string;
  organizationId: string;
  userId: string;
  nodeId: string;
  deviceNickname: string | null;
  hostname: string | null;
  assetTag: string | null;
  serialNumber: string | null;
  status: DeviceRow["status"];
  /** The nickname, else the hostname, else the node id: what a person recognizes. */
  displayName: string;
  activeMembershipCount: number;
  createdAt: Date;
}

export const toDeviceView = (d: DeviceRow, activeMembershipCount = 0): DeviceView => ({
  id: d.id,
  organizationId: d.organizationId,
  userId: d.userId,
  nodeId: d.nodeId,
  deviceNickname: d.nickname,
  hostname: d.hostname,
  assetTag: d.assetTag,
  serialNumber: d.serialNumber,
  status: d.status,
  displayName: d.nickname ?? d.hostname ?? d.nodeId,
  activeMembershipCount,
  createdAt: d.createdAt,
});

export interface ApprovalView {
  id: string;
  userId: string;
  portalNetworkId: string;
  grantedByUserId: string | null;
  grantType: ApprovalRow["grantType"];
  state: ApprovalRow["state"];
  justification: string | null;
  decisionReason: string | null;
  decidedAt: Date | null;
  createdAt: Date;
  userEmail?: string;
  userName?: string | null;
  networkName?: string;
}

export const toApprovalView = (a: ApprovalRow, extra: { email?: string; fullName?: string | null; networkName?: string } = {}): ApprovalView => ({
  id: a.id,
  userId: a.userId,
  portalNetworkId: a.portalNetworkId,
  grantedByUserId: a.grantedByUserId,
  grantType: a.grantType,
  state: a.state,
  justification: a.justification,
  decisionReason: a.decisionReason,
  decidedAt: a.decidedAt,
  createdAt: a.createdAt,
  ...(extra.email !== undefined ? { userEmail: extra.email, userName: extra.fullName ?? null } : {}),
  ...(extra.networkName !== undefined ? { networkName: extra.networkName } : {}),
});

export interface SessionView {
  id: string;
  deviceNetworkMembershipId: string;
  userId: string;
  authenticatedAt: Date;
  expiresAt: Date;
  endedAt: Date | null;
  endReason: SessionRow["endReason"];
  createdBy: string | null;
  isExpired: boolean;
  isActive: boolean;
  minutesLeft: number;
}

export const toSessionView = (s: SessionRow, now: Date): SessionView => {
  const expired = s.expiresAt.getTime() <= now.getTime();
  const active = !s.endedAt && !expired;
  return {
    id: s.id,
    deviceNetworkMembershipId: s.membershipId,
    userId: s.userId,
    authenticatedAt: s.authenticatedAt,
    expiresAt: s.expiresAt,
    endedAt: s.endedAt,
    endReason: s.endReason,
    createdBy: s.createdBy,
    isExpired: expired,
    isActive: active,
    minutesLeft: active ? Math.ceil((s.expiresAt.getTime() - now.getTime()) / 60_000) : 0,
  };
};

/** A membership as every listing shows it: with the device's and the owner's human names. */
export interface MembershipView {
  id: string;
  userId: string;
  deviceId: string;
  portalNetworkId: string;
  userNetworkApprovalId: string | null;
  state: MembershipRow["state"];
  joinSeen: boolean;
  currentlyAuthorized: boolean;
  approvedForActivation: boolean;
  nodeId: string;
  deviceNickname: string | null;
  deviceDisplayName: string;
  ownerName: string | null;
  ownerEmail: string;
  networkName: string;
  zerotierNetworkId: string;
  activeSession: { id: string; authenticatedAt: Date; expiresAt: Date; minutesLeft: number } | null;
}

export interface EnrichedMembership {
  membership: MembershipRow;
  nodeId: string;
  deviceNickname: string | null;
  hostname: string | null;
  ownerEmail: string;
  ownerName: string | null;
  networkName: string;
  zerotierNetworkId: string;
  sessionId: string | null;
  sessionExpiresAt: Date | null;
  sessionAuthenticatedAt: Date | null;
}

const ACTIVATABLE: MembershipRow["state"][] = ["approved_inactive", "joined_deauthorized", "active_authorized", "activation_expired"];

export const toMembershipView = (m: EnrichedMembership, now: Date): MembershipView => ({
  id: m.membership.id,
  userId: m.membership.userId,
  deviceId: m.membership.deviceId,
  portalNetworkId: m.membership.portalNetworkId,
  userNetworkApprovalId: m.membership.approvalId,
  state: m.membership.state,
  joinSeen: m.membership.joinSeen,
  currentlyAuthorized: m.membership.currentlyAuthorized,
  approvedForActivation: ACTIVATABLE.includes(m.membership.state),
  nodeId: m.nodeId,
  deviceNickname: m.deviceNickname,
  deviceDisplayName: m.deviceNickname ?? m.hostname ?? m.nodeId,
  ownerName: m.ownerName,
  ownerEmail: m.ownerEmail,
  networkName: m.networkName,
  zerotierNetworkId: m.zerotierNetworkId,
  activeSession:
    m.sessionId && m.sessionExpiresAt && m.sessionAuthenticatedAt
      ? {
          id: m.sessionId,
          authenticatedAt: m.sessionAuthenticatedAt,
          expiresAt: m.sessionExpiresAt,
          minutesLeft: Math.max(0, Math.ceil((m.sessionExpiresAt.getTime() - now.getTime()) / 60_000)),
        }
      : null,
});

export const isActivatable = (state: MembershipRow["state"]): boolean => ACTIVATABLE.includes(state);

export interface KillSwitchView {
  id: string;
  organizationId: string | null;
  targetUserId: string;
  targetEmail?: string;
  targetName?: string | null;
  scope: KillSwitchRow["scope"];
  networkIds: string[];
  reason: string | null;
  triggeredByUserId: string | null;
  sessionsEnded: number;
  createdAt: Date;
  liftedAt: Date | null;
  liftedByUserId: string | null;
}

export const toKillSwitchView = (k: KillSwitchRow, target?: { email: string; fullName: string | null }): KillSwitchView => ({
  id: k.id,
  organizationId: k.organizationId,
  targetUserId: k.targetUserId,
  ...(target ? { targetEmail: target.email, targetName: target.fullName } : {}),
  scope: k.scope,
  networkIds: k.networkIds ?? [],
  reason: k.reason,
  triggeredByUserId: k.triggeredByUserId,
  sessionsEnded: k.sessionsEnded,
  createdAt: k.createdAt,
  liftedAt: k.liftedAt,
  liftedByUserId: k.liftedByUserId,
});
