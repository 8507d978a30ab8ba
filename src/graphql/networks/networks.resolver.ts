import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { SUPERADMIN } from "../auth-checker.js";
import { message, MessagePayload } from "../common/common.types.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { scope } from "../scope.js";
import {
  ControllerNetwork,
  CreatePortalNetworkInput,
  NetworkControllerConfig,
  NetworkControllerInput,
  NetworkManager,
  PortalNetwork,
  ReconcileReport,
  UpdatePortalNetworkInput,
} from "./networks.types.js";
import { NetworkApproval, NetworkMembership } from "../network-access/network-access.types.js";

/**
 * Governed ZeroTier networks, administration side: the controller connection, portal networks and
 * their managers, reconciliation (REST: networks.routes.ts, same services).
 */
@Resolver()
export class NetworksResolver {
  constructor(private readonly s: Pick<Services, "networkController" | "networkReconcile" | "portalNetworks">) {}

  // --- controller connection ---

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => NetworkControllerConfig, { description: "The organization's controller connection (never its token)" })
  networkControllerConfig(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.networkController.get(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => NetworkControllerConfig, { description: "Connect a controller: saved only after a live connectivity test" })
  configureNetworkController(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => NetworkControllerInput) input: NetworkControllerInput) {
    return this.s.networkController.put(ctx, orgId, omitNulls(input));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => MessagePayload)
  async removeNetworkController(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    await this.s.networkController.remove(ctx, orgId);
    return message("Controller disconnected");
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [ControllerNetwork], { description: "The controller's networks not imported yet" })
  availableControllerNetworks(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.portalNetworks.available(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => [PortalNetwork], { description: "Import controller networks as portal networks, under their controller names" })
  importControllerNetworks(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("zerotierNetworkIds", () => [String]) zerotierNetworkIds: string[]) {
    return this.s.portalNetworks.importNetworks(ctx, orgId, { zerotierNetworkIds });
  }

  // --- portal networks ---

  @Authorized()
  @org(OrgRole.member)
  @scope("networks:activate")
  @Query(() => [PortalNetwork])
  portalNetworks(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("includeInactive", () => Boolean, { nullable: true }) includeInactive?: boolean) {
    return this.s.portalNetworks.list(ctx, orgId, omitNulls({ includeInactive }));
  }

  @Authorized()
  @org(OrgRole.member)
  @Query(() => PortalNetwork)
  portalNetwork(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("networkId", () => ID) networkId: string) {
    return this.s.portalNetworks.get(ctx, orgId, networkId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => PortalNetwork, { description: "Add a portal network (it must exist at the controller)" })
  createPortalNetwork(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => CreatePortalNetworkInput) input: CreatePortalNetworkInput) {
    return this.s.portalNetworks.create(ctx, orgId, omitNulls(input));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => PortalNetwork)
  updatePortalNetwork(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("networkId", () => ID) networkId: string,
    @Arg("input", () => UpdatePortalNetworkInput) input: UpdatePortalNetworkInput,
  ) {
    return this.s.portalNetworks.update(ctx, orgId, networkId, input);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => MessagePayload, { description: "Remove a portal network: activations end and its devices come off" })
  async deletePortalNetwork(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("networkId", () => ID) networkId: string) {
    await this.s.portalNetworks.remove(ctx, orgId, networkId);
    return message("Network deleted");
  }

  @Authorized()
  @org(OrgRole.member)
  @Query(() => [NetworkMembership], { description: "Managers: the network's device memberships, with names" })
  portalNetworkMembers(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("networkId", () => ID) networkId: string) {
    return this.s.portalNetworks.members(ctx, orgId, networkId);
  }

  @Authorized()
  @org(OrgRole.member)
  @Query(() => [NetworkApproval], { description: "Managers: pending requests for the network" })
  portalNetworkRequests(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("networkId", () => ID) networkId: string) {
    return this.s.portalNetworks.requests(ctx, orgId, networkId);
  }

  @Authorized()
  @org(OrgRole.member)
  @Query(() => [NetworkManager], { description: "The network's named managers (besides owners and admins)" })
  portalNetworkManagers(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("networkId", () => ID) networkId: string) {
    return this.s.portalNetworks.managers(ctx, orgId, networkId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => [NetworkManager], { description: "Name the network's managers; each must be a member of the organization" })
  setPortalNetworkManagers(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("networkId", () => ID) networkId: string,
    @Arg("userIds", () => [ID]) userIds: string[],
  ) {
    return this.s.portalNetworks.setManagers(ctx, orgId, networkId, { userIds });
  }

  // --- reconciliation ---

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => ReconcileReport, { description: "Reconcile the organization's networks with the controller now" })
  reconcileNetworks(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.networkReconcile.reconcileOrg(ctx, orgId);
  }

  @Authorized(SUPERADMIN)
  @Mutation(() => ReconcileReport, { description: "Superadmins: reconcile every organization's networks now" })
  reconcileAllNetworks(@Ctx() { ctx }: GqlContext) {
    return this.s.networkReconcile.reconcileAll(ctx);
  }
}
