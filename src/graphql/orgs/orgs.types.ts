import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { OrgRole } from "../common/org-role.js";

@ObjectType()
export class Organization {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String) slug: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => String, { nullable: true }) logoUrl: string | null;
  @Field(() => OrgRole, { description: "Your role in it" }) role: OrgRole;
  @Field(() => Int, { nullable: true }) memberCount?: number;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@ObjectType()
export class SimpleOrganization {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String) slug: string;
  @Field(() => OrgRole) role: OrgRole;
}

@InputType()
export class CreateOrganizationInput {
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true, description: "Derived from the name when absent" }) slug?: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => String, { nullable: true }) logoUrl?: string;
}

@InputType()
export class UpdateOrganizationInput {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true }) logoUrl?: string | null;
}

@ObjectType()
export class Member {
  @Field(() => ID) userId: string;
  @Field(() => String) email: string;
  @Field(() => String, { nullable: true }) fullName: string | null;
  @Field(() => String, { nullable: true }) avatarUrl: string | null;
  @Field(() => String) status: string;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => Date) joinedAt: Date;
}

@ObjectType()
export class RoleHolder {
  @Field(() => ID) userId: string;
  @Field(() => OrgRole) role: OrgRole;
}

@ObjectType()
export class TransferOwnershipPayload {
  @Field(() => RoleHolder) previousOwner: RoleHolder;
  @Field(() => RoleHolder) newOwner: RoleHolder;
}
