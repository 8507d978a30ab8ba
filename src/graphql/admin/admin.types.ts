import { Field, ID, Int, ObjectType } from "type-graphql";
import { OrgRole } from "../common/org-role.js";
import { WebauthnCredential } from "../mfa/mfa.types.js";
import { ManagingOrganization, User } from "../users/users.types.js";

@ObjectType()
export class OrgMembershipRef {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => OrgRole) role: OrgRole;
}

@ObjectType()
export class AdminUser extends User {
  @Field(() => ManagingOrganization, { nullable: true }) managedBy: ManagingOrganization | null;
  @Field(() => [OrgMembershipRef]) organizations: OrgMembershipRef[];
}

@ObjectType()
export class AdminUserPage {
  @Field(() => [AdminUser]) items: AdminUser[];
  @Field(() => Int) count: number;
  @Field(() => Int) page: number;
  @Field(() => Int) perPage: number;
  @Field(() => Int) pages: number;
}

@ObjectType()
export class UserMfaMethods {
  @Field(() => [WebauthnCredential]) webauthn: WebauthnCredential[];
  @Field(() => Boolean) totpEnabled: boolean;
  @Field(() => Int) backupCodesRemaining: number;
}
