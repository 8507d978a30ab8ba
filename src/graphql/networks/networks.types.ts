import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { PortalNetworkView } from "../../modules/networks/index.js";
import type { GqlInputOf } from "../common/inputs.js";
import type { ViewOf } from "../common/views.js";
import { ControllerMode, NetworkEnvironment, NetworkRequestMode } from "./networks.enums.js";

// --- controller connection ---

@ObjectType({ description: "The organization's controller connection. Its API token is never returned" })
export class NetworkControllerConfig implements ViewOf<"networkController", "get"> {
  @Field(() => Boolean) configured: boolean;
  @Field(() => ControllerMode, { nullable: true }) ztApiMode: ControllerMode | null;
  @Field(() => String, { nullable: true }) ztApiUrl: string | null;
  @Field(() => String, { nullable: true, description: "The controller's ZeroTier address (10 hex)" }) controllerAddress: string | null;
  @Field(() => Date, { nullable: true }) lastCheckedAt: Date | null;
  @Field(() => Date, { nullable: true }) updatedAt: Date | null;
}

@InputType()
export class NetworkControllerInput implements GqlInputOf<NetworkControllerInput, "networkController", "put"> {
  @Field(() => ControllerMode) ztApiMode: ControllerMode;
  @Field(() => String, { description: "Sealed at rest, never shown again" }) ztApiToken: string;
  @Field(() => String, { nullable: true, description: "Self-hosted controllers only; must be on the operator's list" }) ztApiUrl?: string;
}

@ObjectType({ description: "A network as the controller knows it" })
export class ControllerNetwork implements ViewOf<"portalNetworks", "available"> {
  @Field(() => ID, { description: "The 16-hex ZeroTier network id" }) id: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
}

// --- portal networks ---

@ObjectType({ description: "A ZeroTier network whose access Keyward governs" })
export class PortalNetwork implements PortalNetworkView {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => ID, { nullable: true }) ownerUserId: string | null;
  @Field(() => String, { description: "16 hex" }) zerotierNetworkId: string;
  @Field(() => NetworkEnvironment) environment: NetworkEnvironment;
  @Field(() => NetworkRequestMode) requestMode: NetworkRequestMode;
  @Field(() => Int) defaultActivationLifetimeMinutes: number;
  @Field(() => Int, { nullable: true }) maxActivationLifetimeMinutes: number | null;
  @Field(() => Boolean) isActive: boolean;
  @Field(() => Int) approvedUserCount: number;
  @Field(() => Int) activeMembershipCount: number;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@InputType()
export class CreatePortalNetworkInput implements GqlInputOf<CreatePortalNetworkInput, "portalNetworks", "create"> {
  @Field(() => String) name: string;
  @Field(() => String, { description: "16 hex; the network must exist at the organization's controller" }) zerotierNetworkId: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => NetworkEnvironment, { nullable: true, description: "Default production" }) environment?: NetworkEnvironment;
  @Field(() => NetworkRequestMode, { nullable: true, description: "Default approval_required" }) requestMode?: NetworkRequestMode;
  @Field(() => Int, { nullable: true, description: "Default 480" }) defaultActivationLifetimeMinutes?: number;
  @Field(() => Int, { nullable: true }) maxActivationLifetimeMinutes?: number;
}

@InputType()
export class UpdatePortalNetworkInput implements GqlInputOf<UpdatePortalNetworkInput, "portalNetworks", "update"> {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => NetworkEnvironment, { nullable: true }) environment?: NetworkEnvironment;
  @Field(() => NetworkRequestMode, { nullable: true }) requestMode?: NetworkRequestMode;
  @Field(() => Int, { nullable: true }) defaultActivationLifetimeMinutes?: number;
  @Field(() => Int, { nullable: true, description: "null removes the maximum" }) maxActivationLifetimeMinutes?: number | null;
  @Field(() => Boolean, { nullable: true, description: "false takes the network's devices off at once" }) isActive?: boolean;
}

@ObjectType()
export class NetworkManager implements ViewOf<"portalNetworks", "managers"> {
  @Field(() => ID) userId: string;
  @Field(() => String) email: string;
  @Field(() => String, { nullable: true }) fullName: string | null;
}

// --- reconciliation ---

type ReconcileErrorView = ViewOf<"networkReconcile", "reconcileOrg">["errors"][number];

@ObjectType()
export class ReconcileError implements ReconcileErrorView {
  @Field(() => ID) networkId: string;
  @Field(() => String) zerotierNetworkId: string;
  @Field(() => String) error: string;
}

@ObjectType()
export class ReconcileReport implements ViewOf<"networkReconcile", "reconcileOrg"> {
  @Field(() => Int) networksProcessed: number;
  @Field(() => Int, { description: "Authorizations and deauthorizations made at the controller" }) changes: number;
  @Field(() => Int, { description: "Activations that ran out in this pass" }) expired: number;
  @Field(() => [ReconcileError], { description: "Networks not processed; the next pass retries them" }) errors: ReconcileError[];
  @Field(() => Int) controllerCalls: number;
}
