import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { CutList, OffboardingReceipt as ReceiptView, ReinstateResult } from "../../modules/offboarding/index.js";
import type { GqlInputOf } from "../common/inputs.js";
import { OrgRole } from "../common/org-role.js";
import { Paged } from "../common/paged.js";

@ObjectType({ description: "What was cut: how many, and which" })
export class OffboardingCut implements CutList {
  @Field(() => Int) count: number;
  @Field(() => [String]) ids: string[];
}

@ObjectType()
export class OffboardingCertificates extends OffboardingCut {
  @Field(() => [String], { description: "Serials now in the organization's published KRL" }) serials: string[];
}

@ObjectType()
export class OffboardingCount {
  @Field(() => Int) count: number;
}

@ObjectType()
export class OffboardingPending {
  @Field(() => [String], { description: "Devices the network controller has not confirmed yet: reconciliation finishes them" }) devices: string[];
}

@ObjectType({ description: "One offboarding's receipt: its audit record, listing what was cut and what is still being retried" })
export class OffboardingReceipt implements ReceiptView {
  @Field(() => ID) id: string;
  @Field(() => ID, { description: "The audit record that is the receipt (verified by the audit chain)" }) auditId: string;
  @Field(() => ID) organizationId: string;
  @Field(() => ID) userId: string;
  @Field(() => ID, { nullable: true }) actorId: string | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => String, { description: "suspend or remove" }) mode: ReceiptView["mode"];
  @Field(() => String) reason: string;
  @Field(() => OrgRole, { description: "The role the person held" }) role: OrgRole;
  @Field(() => Boolean, { description: "The account is managed by this organization: its sessions and CLI tokens ended too" }) managed: boolean;
  @Field(() => Boolean, { description: "A managed account suspended: sign-in refused until reinstated" }) accountSuspended: boolean;
  @Field(() => OffboardingCut) sessions: CutList;
  @Field(() => OffboardingCount, { description: "Delegated CLI (OIDC) tokens, grants and codes ended" }) cliTokens: { count: number };
  @Field(() => OffboardingCut, { description: "Organization API keys the person created, revoked" }) apiKeys: CutList;
  @Field(() => OffboardingCut, { description: "Unused host enrollment tokens the person created, revoked" }) enrollmentTokens: CutList;
  @Field(() => OffboardingCertificates) certificates: ReceiptView["certificates"];
  @Field(() => OffboardingCut, { description: "Device memberships on this organization's networks, deauthorized" }) devices: CutList;
  @Field(() => OffboardingCut) departments: CutList;
  @Field(() => OffboardingCut) principals: CutList;
  @Field(() => OffboardingPending) pending: ReceiptView["pending"];
}

@ObjectType()
export class OffboardingReceiptPage extends Paged(OffboardingReceipt) {}

@ObjectType()
export class Reinstatement implements ReinstateResult {
  @Field(() => ID) organizationId: string;
  @Field(() => ID) userId: string;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => ID, { description: "The receipt of the suspension lifted" }) receiptId: string;
  @Field(() => Boolean) accountReactivated: boolean;
}

@InputType()
export class OffboardInput implements GqlInputOf<OffboardInput, "offboarding", "offboard"> {
  @Field(() => String, { description: "suspend (reversible: reinstateMember) or remove" }) mode: string;
  @Field(() => String, { description: "Why: kept on the receipt" }) reason: string;
}
