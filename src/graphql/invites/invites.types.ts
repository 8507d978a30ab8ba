import { Field, ID, InputType, ObjectType } from "type-graphql";
import type { GqlInputOf } from "../common/inputs.js";
import { OrgRole } from "../common/org-role.js";
import type { ViewOf } from "../common/views.js";
import { User } from "../users/users.types.js";

@ObjectType()
export class Invite implements ViewOf<"invites", "list"> {
  @Field(() => ID) id: string;
  @Field(() => String) email: string;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => ID) invitedBy: string;
  @Field(() => Date) expiresAt: Date;
  @Field(() => Date) createdAt: Date;
  @Field(() => Boolean) expired: boolean;
}

@InputType()
export class InviteInput implements GqlInputOf<InviteInput, "invites", "send"> {
  @Field(() => String) email: string;
  @Field(() => OrgRole, { nullable: true, defaultValue: OrgRole.member }) role?: OrgRole;
}

@InputType()
export class AddMemberInput implements GqlInputOf<AddMemberInput, "invites", "addMember"> {
  @Field(() => String) email: string;
  @Field(() => OrgRole, { nullable: true, defaultValue: OrgRole.member }) role?: OrgRole;
  @Field(() => String, { nullable: true }) fullName?: string;
}

type OrgRefView = ViewOf<"invites", "lookup">["organization"];

@ObjectType()
export class OrgRef implements OrgRefView {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
}

@ObjectType()
export class InvitePreview implements ViewOf<"invites", "lookup"> {
  @Field(() => String) email: string;
  @Field(() => OrgRef) organization: OrgRef;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => Date) expiresAt: Date;
  @Field(() => Boolean) userExists: boolean;
  @Field(() => Boolean, { description: "Accepting creates an account this organization manages" }) managed: boolean;
}

@InputType()
export class AcceptInviteInput implements GqlInputOf<AcceptInviteInput, "invites", "accept"> {
  @Field(() => String, { nullable: true }) fullName?: string;
  @Field(() => String, { nullable: true, description: "Required when the invitation registers a new account" }) password?: string;
  @Field(() => String, { nullable: true }) passwordConfirm?: string;
}

@ObjectType()
export class AcceptInvitePayload implements ViewOf<"invites", "acceptMine"> {
  @Field(() => OrgRef) organization: OrgRef;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => User) user: User;
}

@ObjectType()
export class MyInvite implements ViewOf<"invites", "listMine"> {
  @Field(() => ID) id: string;
  @Field(() => OrgRef) organization: OrgRef;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => Date) expiresAt: Date;
}

@InputType()
export class ActivateAccountInput implements GqlInputOf<ActivateAccountInput, "invites", "activate"> {
  @Field(() => String) code: string;
  @Field(() => String) password: string;
  @Field(() => String, { nullable: true }) passwordConfirm?: string;
  @Field(() => String, { nullable: true }) fullName?: string;
}
