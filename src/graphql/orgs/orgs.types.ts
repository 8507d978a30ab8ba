import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { OrganizationView, SimpleOrgView } from "../../modules/orgs/index.js";
import type { GqlInputOf } from "../common/inputs.js";
import { OrgRole } from "../common/org-role.js";
import type { ViewOf } from "../common/views.js";

@ObjectType()
export class Organization implements OrganizationView {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String) slug: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => String, { nullable: true }) logoUrl: string | null;
  @Field(() => OrgRole, { description: "Your role in it (a role grant in force counts)" }) role: OrgRole;
  @Field(() => OrgRole, { description: "The role kept on your membership, whatever a role grant adds: what a temporary role never confers needs it" }) storedRole: OrgRole;
  @Field(() => Date, { nullable: true, description: "When your role above storedRole (a role grant) ends; null when you are not elevated" }) elevatedUntil: Date | null;
  @Field(() => Int, { nullable: true }) memberCount?: number;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@ObjectType()
export class SimpleOrganization implements SimpleOrgView {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String) slug: string;
  @Field(() => OrgRole) role: OrgRole;
}

@InputType()
export class CreateOrganizationInput implements GqlInputOf<CreateOrganizationInput, "orgs", "create"> {
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true, description: "Derived from the name when absent" }) slug?: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => String, { nullable: true }) logoUrl?: string;
}

@InputType()
export class UpdateOrganizationInput implements GqlInputOf<UpdateOrganizationInput, "orgs", "update"> {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true }) logoUrl?: string | null;
}

@ObjectType()
export class Member implements ViewOf<"members", "list"> {
  @Field(() => ID) userId: string;
  @Field(() => String) email: string;
  @Field(() => String, { nullable: true }) fullName: string | null;
  @Field(() => String, { nullable: true }) avatarUrl: string | null;
  @Field(() => String) status: string;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => Date) joinedAt: Date;
  @Field(() => Date, { nullable: true, description: "When the member last signed in: for the organization's admins only (null for anyone else)" }) lastLoginAt: Date | null;
  @Field(() => Boolean, { description: "The account is managed by this organization (its admins may suspend it, reset its password, remove its MFA)" }) managed: boolean;
}

type TransferOwnershipView = ViewOf<"orgs", "transferOwnership">;
// One type for both sides of a transfer; the service pins each side's role (admin, owner).
type RoleHolderView = Omit<TransferOwnershipView["newOwner"], "role">;

@ObjectType()
export class RoleHolder implements RoleHolderView {
  @Field(() => ID) userId: string;
  @Field(() => OrgRole) role: OrgRole;
}

@ObjectType()
export class TransferOwnershipPayload implements TransferOwnershipView {
  @Field(() => RoleHolder) previousOwner: TransferOwnershipView["previousOwner"];
  @Field(() => RoleHolder) newOwner: TransferOwnershipView["newOwner"];
}

@ObjectType({ description: "A member removed. Removing someone else is offboarding: its receipt (offboardingReceipt)" })
export class RemoveMemberPayload {
  @Field(() => String) message: string;
  @Field(() => ID, { nullable: true, description: "The offboarding receipt's id; null when you removed yourself (leaving has no receipt)" })
  receiptId: string | null;
}
