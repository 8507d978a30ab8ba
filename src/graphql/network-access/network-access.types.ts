import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { ApprovalView, DeviceView, KillSwitchView, MembershipView, SessionView } from "../../modules/networks/index.js";
import type { GqlInput, GqlInputOf, InputOf } from "../common/inputs.js";
import type { ViewOf } from "../common/views.js";
import { DeviceStatus, KillSwitchScope } from "../networks/networks.enums.js";

// People's side of governed networks: devices, approvals, memberships and activations, and the
// kill switch that ends them.

// --- memberships and activations ---

@ObjectType()
export class RunningActivation implements NonNullable<MembershipView["activeSession"]> {
  @Field(() => ID) id: string;
  @Field(() => Date) authenticatedAt: Date;
  @Field(() => Date) expiresAt: Date;
  @Field(() => Int) minutesLeft: number;
}

@ObjectType({ description: "One device on one network, with the device's and its owner's names" })
export class NetworkMembership implements MembershipView {
  @Field(() => ID) id: string;
  @Field(() => ID) userId: string;
  @Field(() => ID) deviceId: string;
  @Field(() => ID) portalNetworkId: string;
  @Field(() => ID, { nullable: true }) userNetworkApprovalId: string | null;
  @Field(() => String, { description: "pending_request, pending_manager_approval, approved_inactive, active_authorized, activation_expired, suspended, revoked, …" }) state: MembershipView["state"];
  @Field(() => Boolean) joinSeen: boolean;
  @Field(() => Boolean) currentlyAuthorized: boolean;
  @Field(() => Boolean, { description: "It can be switched on" }) approvedForActivation: boolean;
  @Field(() => String) nodeId: string;
  @Field(() => String, { nullable: true }) deviceNickname: string | null;
  @Field(() => String) deviceDisplayName: string;
  @Field(() => String, { nullable: true }) ownerName: string | null;
  @Field(() => String) ownerEmail: string;
  @Field(() => String) networkName: string;
  @Field(() => String) zerotierNetworkId: string;
  @Field(() => RunningActivation, { nullable: true, description: "The activation running now, with time left" }) activeSession: RunningActivation | null;
}

@ObjectType()
export class ActivationSession implements SessionView {
  @Field(() => ID) id: string;
  @Field(() => ID) deviceNetworkMembershipId: string;
  @Field(() => ID) userId: string;
  @Field(() => Date) authenticatedAt: Date;
  @Field(() => Date) expiresAt: Date;
  @Field(() => Date, { nullable: true }) endedAt: Date | null;
  @Field(() => String, { nullable: true, description: "expired, logout, kill_switch, manual_revoke, approval_revoked, admin_action" }) endReason: SessionView["endReason"];
  @Field(() => ID, { nullable: true }) createdBy: string | null;
  @Field(() => Boolean) isExpired: boolean;
  @Field(() => Boolean) isActive: boolean;
  @Field(() => Int) minutesLeft: number;
}

@ObjectType({ description: "A running activation with the device's, owner's and network's names" })
export class NetworkSession extends ActivationSession implements ViewOf<"networkAccess", "sessions"> {
  @Field(() => String) nodeId: string;
  @Field(() => String, { nullable: true }) deviceNickname: string | null;
  @Field(() => String) ownerEmail: string;
  @Field(() => String, { nullable: true }) ownerName: string | null;
  @Field(() => ID) portalNetworkId: string;
  @Field(() => String) networkName: string;
}

@ObjectType()
export class ActivationPayload implements ViewOf<"networkAccess", "activate"> {
  @Field(() => ActivationSession) session: ActivationSession;
  @Field(() => NetworkMembership) membership: NetworkMembership;
  @Field(() => Boolean, { description: "False when the controller could not be reached: the activation stands and reconciliation applies it" }) controllerSynced: boolean;
}

@ObjectType()
export class ActivateAllPayload implements ViewOf<"networkAccess", "activateAll"> {
  @Field(() => [ActivationSession]) sessions: ActivationSession[];
  @Field(() => Boolean) controllerSynced: boolean;
}

// --- devices ---

@ObjectType({ description: "A person's device: its ZeroTier node id and the names people know it by" })
export class Device implements DeviceView {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => ID) userId: string;
  @Field(() => String, { description: "10 hex" }) nodeId: string;
  @Field(() => String, { nullable: true }) deviceNickname: string | null;
  @Field(() => String, { nullable: true }) hostname: string | null;
  @Field(() => String, { nullable: true }) assetTag: string | null;
  @Field(() => String, { nullable: true }) serialNumber: string | null;
  @Field(() => DeviceStatus) status: DeviceStatus;
  @Field(() => String, { description: "The nickname, else the hostname, else the node id" }) displayName: string;
  @Field(() => Int) activeMembershipCount: number;
  @Field(() => Date) createdAt: Date;
}

@ObjectType()
export class DeviceWithMemberships extends Device implements ViewOf<"devices", "get"> {
  @Field(() => [NetworkMembership]) memberships: NetworkMembership[];
}

@InputType()
export class RegisterDeviceInput implements GqlInputOf<RegisterDeviceInput, "devices", "create"> {
  @Field(() => String, { description: "The device's 10-hex ZeroTier node id" }) nodeId: string;
  @Field(() => String, { nullable: true }) nickname?: string;
  @Field(() => String, { nullable: true }) hostname?: string;
  @Field(() => String, { nullable: true }) assetTag?: string;
  @Field(() => String, { nullable: true }) serialNumber?: string;
}

@InputType()
export class UpdateDeviceInput implements GqlInputOf<UpdateDeviceInput, "devices", "update"> {
  @Field(() => String, { nullable: true }) nickname?: string | null;
  @Field(() => String, { nullable: true }) hostname?: string | null;
  @Field(() => String, { nullable: true }) assetTag?: string | null;
  @Field(() => String, { nullable: true }) serialNumber?: string | null;
  @Field(() => DeviceStatus, { nullable: true }) status?: DeviceStatus;
}

@ObjectType()
export class RegisterDevicePayload implements ViewOf<"devices", "create"> {
  @Field(() => Device) device: Device;
  @Field(() => Int, { description: "Networks it joined at once (its owner was approved for them)" }) membershipsCreated: number;
}

@InputType()
export class ImportMemberAssignment implements GqlInput<ImportMemberAssignment, InputOf<"devices", "importMembers">["assignments"][number]> {
  @Field(() => String) nodeId: string;
  @Field(() => String, { description: "The organization member who owns the node" }) email: string;
  @Field(() => String, { nullable: true }) nickname?: string;
}

@InputType()
export class ImportNetworkMembersInput implements GqlInputOf<ImportNetworkMembersInput, "devices", "importMembers"> {
  @Field(() => ID) portalNetworkId: string;
  @Field(() => [ImportMemberAssignment], { description: "Controller members not listed are left alone" }) assignments: ImportMemberAssignment[];
}

type SkippedNetworkMemberView = ViewOf<"devices", "importMembers">["skipped"][number];

@ObjectType()
export class SkippedNetworkMember implements SkippedNetworkMemberView {
  @Field(() => String) nodeId: string;
  @Field(() => String) reason: string;
}

@ObjectType()
export class ImportNetworkMembersPayload implements ViewOf<"devices", "importMembers"> {
  @Field(() => Int) imported: number;
  @Field(() => [SkippedNetworkMember]) skipped: SkippedNetworkMember[];
}

// --- approvals ---

@ObjectType({ description: "A person's standing on a network: requested or assigned, then decided" })
export class NetworkApproval implements ApprovalView {
  @Field(() => ID) id: string;
  @Field(() => ID) userId: string;
  @Field(() => ID) portalNetworkId: string;
  @Field(() => ID, { nullable: true }) grantedByUserId: string | null;
  @Field(() => String, { description: "requested or assigned" }) grantType: ApprovalView["grantType"];
  @Field(() => String, { description: "pending, approved, rejected, revoked, suspended" }) state: ApprovalView["state"];
  @Field(() => String, { nullable: true }) justification: string | null;
  @Field(() => String, { nullable: true }) decisionReason: string | null;
  @Field(() => Date, { nullable: true }) decidedAt: Date | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => String, { nullable: true, description: "In managers' listings" }) userEmail?: string;
  @Field(() => String, { nullable: true, description: "In managers' listings" }) userName?: string | null;
  @Field(() => String, { nullable: true, description: "In managers' listings" }) networkName?: string;
}

@InputType()
export class RequestNetworkAccessInput implements GqlInputOf<RequestNetworkAccessInput, "networkApprovals", "request"> {
  @Field(() => ID) portalNetworkId: string;
  @Field(() => ID, { nullable: true, description: "One of your devices to put on the network" }) deviceId?: string;
  @Field(() => String, { nullable: true }) justification?: string;
}

@InputType()
export class AssignNetworkAccessInput implements GqlInputOf<AssignNetworkAccessInput, "networkApprovals", "assign"> {
  @Field(() => ID) targetUserId: string;
  @Field(() => ID) portalNetworkId: string;
  @Field(() => String, { nullable: true }) justification?: string;
}

// --- kill switch ---

@ObjectType()
export class KillSwitchEvent implements KillSwitchView {
  @Field(() => ID) id: string;
  @Field(() => ID, { nullable: true, description: "null for a global kill switch" }) organizationId: string | null;
  @Field(() => ID) targetUserId: string;
  @Field(() => String, { nullable: true, description: "In the history" }) targetEmail?: string;
  @Field(() => String, { nullable: true, description: "In the history" }) targetName?: string | null;
  @Field(() => KillSwitchScope) scope: KillSwitchScope;
  @Field(() => [ID]) networkIds: string[];
  @Field(() => String, { nullable: true }) reason: string | null;
  @Field(() => ID, { nullable: true }) triggeredByUserId: string | null;
  @Field(() => Int) sessionsEnded: number;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date, { nullable: true }) liftedAt: Date | null;
  @Field(() => ID, { nullable: true }) liftedByUserId: string | null;
}

@InputType()
export class KillSwitchInput implements GqlInputOf<KillSwitchInput, "networkAccess", "killSwitch"> {
  @Field(() => ID) targetUserId: string;
  @Field(() => KillSwitchScope, { nullable: true, description: "Default organization" }) scope?: KillSwitchScope;
  @Field(() => String, { nullable: true }) reason?: string;
  @Field(() => [ID], { nullable: true, description: "Required for selected_networks: portal network ids of this organization" }) networkIds?: string[];
}

@ObjectType()
export class KillSwitchPayload implements ViewOf<"networkAccess", "killSwitch"> {
  @Field(() => KillSwitchEvent) event: KillSwitchEvent;
  @Field(() => Boolean) controllerSynced: boolean;
}
