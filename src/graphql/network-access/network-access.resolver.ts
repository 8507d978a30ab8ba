import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { message, MessagePayload } from "../common/common.types.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { scope } from "../scope.js";
import {
  ActivateAllPayload,
  ActivationPayload,
  AssignNetworkAccessInput,
  Device,
  DeviceWithMemberships,
  ImportNetworkMembersInput,
  ImportNetworkMembersPayload,
  KillSwitchEvent,
  KillSwitchInput,
  KillSwitchPayload,
  NetworkApproval,
  NetworkMembership,
  NetworkSession,
  RegisterDeviceInput,
  RegisterDevicePayload,
  RequestNetworkAccessInput,
  UpdateDeviceInput,
} from "./network-access.types.js";

/**
 * Governed ZeroTier networks, people's side: devices, access requests and decisions, time-boxed
 * activation, and the kill switch that cuts a person off (REST: networks.routes.ts, same services).
 */
@Resolver()
export class NetworkAccessResolver {
  constructor(private readonly s: Pick<Services, "devices" | "networkAccess" | "networkApprovals">) {}

  // --- devices ---

  @Authorized()
  @org(OrgRole.member)
  @scope("networks:activate")
  @Query(() => [Device], { description: "Your devices" })
  myDevices(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.devices.list(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.member)
  @scope("networks:activate")
  @Query(() => DeviceWithMemberships, { description: "A device and its networks, with time left" })
  device(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("deviceId", () => ID) deviceId: string) {
    return this.s.devices.get(ctx, orgId, deviceId);
  }

  @Authorized()
  @org(OrgRole.member)
  @Mutation(() => RegisterDevicePayload, { description: "Register a device; it joins every network you are approved for" })
  registerDevice(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => RegisterDeviceInput) input: RegisterDeviceInput) {
    return this.s.devices.create(ctx, orgId, omitNulls(input));
  }

  @Authorized()
  @org(OrgRole.member)
  @Mutation(() => Device, { description: "Rename a device or mark it inactive" })
  updateDevice(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("deviceId", () => ID) deviceId: string, @Arg("input", () => UpdateDeviceInput) input: UpdateDeviceInput) {
    return this.s.devices.update(ctx, orgId, deviceId, input);
  }

  @Authorized()
  @org(OrgRole.member)
  @Mutation(() => MessagePayload, { description: "Delete a device: it comes off every network" })
  async deleteDevice(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("deviceId", () => ID) deviceId: string) {
    await this.s.devices.remove(ctx, orgId, deviceId);
    return message("Device deleted");
  }

  @Authorized()
  @org(OrgRole.member)
  @Mutation(() => NetworkMembership, { description: "Put a device on a network; where it starts depends on your standing there" })
  joinNetwork(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("deviceId", () => ID) deviceId: string, @Arg("networkId", () => ID) networkId: string) {
    return this.s.devices.joinNetwork(ctx, orgId, deviceId, networkId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => ImportNetworkMembersPayload, { description: "Import a network's controller members as people's devices" })
  importNetworkMembers(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => ImportNetworkMembersInput) input: ImportNetworkMembersInput) {
    return this.s.devices.importMembers(ctx, orgId, { portalNetworkId: input.portalNetworkId, assignments: input.assignments.map((a) => omitNulls(a)) });
  }

  // --- approvals ---

  @Authorized()
  @org(OrgRole.member)
  @Mutation(() => NetworkApproval, { description: "Ask for access to a network" })
  requestNetworkAccess(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => RequestNetworkAccessInput) input: RequestNetworkAccessInput) {
    return this.s.networkApprovals.request(ctx, orgId, omitNulls(input));
  }

  @Authorized()
  @org(OrgRole.member)
  @scope("networks:activate")
  @Query(() => [NetworkApproval], { description: "Your approvals" })
  myNetworkApprovals(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.networkApprovals.listMine(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.member)
  @Query(() => [NetworkApproval], { description: "Managers: requests waiting for a decision" })
  pendingNetworkApprovals(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("networkId", () => ID, { nullable: true }) networkId?: string) {
    return this.s.networkApprovals.pending(ctx, orgId, omitNulls({ networkId }));
  }

  @Authorized()
  @org(OrgRole.member)
  @Mutation(() => NetworkApproval, { description: "Managers: grant a member access directly" })
  assignNetworkAccess(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => AssignNetworkAccessInput) input: AssignNetworkAccessInput) {
    return this.s.networkApprovals.assign(ctx, orgId, omitNulls(input));
  }

  @Authorized()
  @org(OrgRole.member)
  @Mutation(() => NetworkApproval, { description: "Managers: approve a request" })
  approveNetworkAccess(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("approvalId", () => ID) approvalId: string, @Arg("reason", () => String, { nullable: true }) reason?: string) {
    return this.s.networkApprovals.approve(ctx, orgId, approvalId, omitNulls({ reason }));
  }

  @Authorized()
  @org(OrgRole.member)
  @Mutation(() => NetworkApproval, { description: "Managers: reject a request" })
  rejectNetworkAccess(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("approvalId", () => ID) approvalId: string, @Arg("reason", () => String, { nullable: true }) reason?: string) {
    return this.s.networkApprovals.reject(ctx, orgId, approvalId, omitNulls({ reason }));
  }

  @Authorized()
  @org(OrgRole.member)
  @Mutation(() => NetworkApproval, { description: "Managers: revoke access (activations end, devices come off)" })
  revokeNetworkAccess(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("approvalId", () => ID) approvalId: string, @Arg("reason", () => String, { nullable: true }) reason?: string) {
    return this.s.networkApprovals.revoke(ctx, orgId, approvalId, omitNulls({ reason }));
  }

  // --- memberships and activation ---

  @Authorized()
  @org(OrgRole.member)
  @scope("networks:activate")
  @Query(() => [NetworkMembership], { description: "Your device memberships, with time left" })
  myNetworkMemberships(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.networkAccess.memberships(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.member)
  @scope("networks:activate")
  @Mutation(() => ActivationPayload, { description: "Switch access on for a bounded time (default: the network's default lifetime)" })
  activateNetworkMembership(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("membershipId", () => ID) membershipId: string,
    @Arg("lifetimeMinutes", () => Int, { nullable: true }) lifetimeMinutes?: number,
  ) {
    return this.s.networkAccess.activate(ctx, orgId, membershipId, omitNulls({ lifetimeMinutes }));
  }

  @Authorized()
  @org(OrgRole.member)
  @scope("networks:activate")
  @Mutation(() => ActivateAllPayload, { description: "Activate every approved device membership at once (lifetimes capped per network)" })
  activateAllNetworkMemberships(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("lifetimeMinutes", () => Int, { nullable: true }) lifetimeMinutes?: number) {
    return this.s.networkAccess.activateAll(ctx, orgId, omitNulls({ lifetimeMinutes }));
  }

  @Authorized()
  @org(OrgRole.member)
  @scope("networks:activate")
  @Mutation(() => NetworkMembership, { description: "Switch access off now" })
  deactivateNetworkMembership(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("membershipId", () => ID) membershipId: string) {
    return this.s.networkAccess.deactivate(ctx, orgId, membershipId);
  }

  @Authorized()
  @org(OrgRole.member)
  @Mutation(() => MessagePayload, { description: "Take your device off a network" })
  async leaveNetwork(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("membershipId", () => ID) membershipId: string) {
    await this.s.networkAccess.leave(ctx, orgId, membershipId);
    return message("Membership removed");
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [NetworkMembership], { description: "Every device membership of the organization, with names" })
  organizationNetworkMemberships(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.networkAccess.adminMemberships(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => MessagePayload, { description: "Remove someone's device from a network" })
  async removeNetworkMembership(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("membershipId", () => ID) membershipId: string) {
    await this.s.networkAccess.adminRemoveMembership(ctx, orgId, membershipId);
    return message("Membership removed");
  }

  @Authorized()
  @org(OrgRole.member)
  @Query(() => [NetworkSession], { description: "Running activations: the organization's for admins, yours otherwise" })
  networkSessions(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.networkAccess.sessions(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.member)
  @Mutation(() => MessagePayload, { description: "End an activation now (your own, or any for admins)" })
  async endNetworkSession(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("sessionId", () => ID) sessionId: string) {
    await this.s.networkAccess.endSession(ctx, orgId, sessionId);
    return message("Activation ended");
  }

  // --- kill switch ---

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => KillSwitchPayload, { description: "Cut a person off at once: activations end, devices deauthorized, access suspended until lifted" })
  triggerKillSwitch(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => KillSwitchInput) input: KillSwitchInput) {
    return this.s.networkAccess.killSwitch(ctx, orgId, omitNulls(input));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [KillSwitchEvent], { description: "Kill-switch history" })
  killSwitchEvents(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.networkAccess.killSwitchHistory(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => KillSwitchEvent, { description: "Lift a kill switch (access can be activated again)" })
  liftKillSwitch(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("eventId", () => ID) eventId: string) {
    return this.s.networkAccess.liftKillSwitch(ctx, orgId, eventId);
  }
}
