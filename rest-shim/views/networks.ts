import { z } from "zod";
import type { Services } from "../../src/container.js";
import { approvalGrantType, approvalState, deviceStatus, networkEnvironment, networkRequestMode } from "../../schema/networks.js";
import { date, type Item, named, type Returns, sameShape } from "./same-shape.js";

// --- portal networks, devices, approvals ---
export const portalNetworkView = named("PortalNetwork", z.object({
  id: z.string(),
  organizationId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  ownerUserId: z.string().nullable(),
  zerotierNetworkId: z.string(),
  environment: z.enum(networkEnvironment.enumValues),
  requestMode: z.enum(networkRequestMode.enumValues),
  defaultActivationLifetimeMinutes: z.number().int(),
  maxActivationLifetimeMinutes: z.number().int().nullable(),
  isActive: z.boolean(),
  approvedUserCount: z.number().int(),
  activeMembershipCount: z.number().int(),
  createdAt: date,
  updatedAt: date,
}));
sameShape<z.output<typeof portalNetworkView>, Returns<Services["portalNetworks"]["get"]>>();
sameShape<z.output<typeof portalNetworkView>, Item<Returns<Services["portalNetworks"]["list"]>>>();

export const deviceView = named("Device", z.object({
  id: z.string(),
  organizationId: z.string(),
  userId: z.string(),
  nodeId: z.string(),
  deviceNickname: z.string().nullable(),
  hostname: z.string().nullable(),
  assetTag: z.string().nullable(),
  serialNumber: z.string().nullable(),
  status: z.enum(deviceStatus.enumValues),
  displayName: z.string(),
  activeMembershipCount: z.number().int(),
  createdAt: date,
}));
sameShape<z.output<typeof deviceView>, Item<Returns<Services["devices"]["list"]>>>();
sameShape<z.output<typeof deviceView>, Returns<Services["devices"]["update"]>>();

export const approvalView = named("Approval", z.object({
  id: z.string(),
  userId: z.string(),
  portalNetworkId: z.string(),
  grantedByUserId: z.string().nullable(),
  grantType: z.enum(approvalGrantType.enumValues),
  state: z.enum(approvalState.enumValues),
  justification: z.string().nullable(),
  decisionReason: z.string().nullable(),
  decidedAt: date.nullable(),
  createdAt: date,
  userEmail: z.string().optional(),
  userName: z.string().nullable().optional(),
  networkName: z.string().optional(),
}));
sameShape<z.output<typeof approvalView>, Returns<Services["networkApprovals"]["request"]>>();
sameShape<z.output<typeof approvalView>, Item<Returns<Services["networkApprovals"]["pending"]>>>();
