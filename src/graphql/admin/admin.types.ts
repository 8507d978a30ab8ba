import { Field, ID, Int, ObjectType } from "type-graphql";
import { Paged } from "../common/paged.js";
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
export class AdminUserPage extends Paged(AdminUser) {}

@ObjectType()
export class UserMfaMethods {
  @Field(() => [WebauthnCredential]) webauthn: WebauthnCredential[];
  @Field(() => Boolean) totpEnabled: boolean;
  @Field(() => Int) backupCodesRemaining: number;
}
