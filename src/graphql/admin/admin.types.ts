import { Field, ID, Int, ObjectType } from "type-graphql";
import { OrgRole } from "../common/org-role.js";
import { Paged } from "../common/paged.js";
import type { ViewOf } from "../common/views.js";
import { WebauthnCredential } from "../mfa/mfa.types.js";
import { ManagingOrganization, User } from "../users/users.types.js";

type OrgMembershipRefView = ViewOf<"adminUsers", "get">["organizations"][number];

@ObjectType()
export class OrgMembershipRef implements OrgMembershipRefView {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => OrgRole) role: OrgRole;
}

@ObjectType()
export class AdminUser extends User implements ViewOf<"adminUsers", "get"> {
  @Field(() => ManagingOrganization, { nullable: true }) managedBy: ManagingOrganization | null;
  @Field(() => [OrgMembershipRef]) organizations: OrgMembershipRef[];
}

@ObjectType()
export class AdminUserPage extends Paged(AdminUser) {}

type UserMfaMethodsView = ViewOf<"adminUsers", "mfaMethods">;

@ObjectType()
export class UserMfaMethods implements UserMfaMethodsView {
  @Field(() => [WebauthnCredential]) webauthn: UserMfaMethodsView["webauthn"];
  @Field(() => Boolean) totpEnabled: boolean;
  @Field(() => Int) backupCodesRemaining: number;
}
