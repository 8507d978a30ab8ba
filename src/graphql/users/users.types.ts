import { Field, ID, InputType, ObjectType } from "type-graphql";
import type { MeView, UserView } from "../../modules/users/index.js";
import type { GqlInputOf } from "../common/inputs.js";
import { closedSet, type ValueOf } from "../common/closed-set.js";

export const UserStatus = closedSet("UserStatus", ["active", "suspended", "pending_activation"]);
export type UserStatus = ValueOf<typeof UserStatus>;

@ObjectType({ description: "An account" })
export class User implements UserView {
  @Field(() => ID) id: string;
  @Field(() => String) email: string;
  @Field(() => String, { nullable: true }) fullName: string | null;
  @Field(() => String, { nullable: true }) avatarUrl: string | null;
  @Field(() => Boolean) emailVerified: boolean;
  @Field(() => Date, { nullable: true }) emailVerifiedAt: Date | null;
  @Field(() => UserStatus) status: UserStatus;
  @Field(() => Boolean) isSuperadmin: boolean;
  @Field(() => Date, { nullable: true }) lastLoginAt: Date | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@ObjectType({ description: "The organization that manages an account: its owners and admins administer the account's credentials" })
export class ManagingOrganization implements NonNullable<MeView["managedBy"]> {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
}

@ObjectType({ description: "The signed-in user, with facts only they see" })
export class Me extends User implements MeView {
  @Field(() => Boolean) hasPassword: boolean;
  @Field(() => ManagingOrganization, { nullable: true, description: "Null: the account is yours alone (only Keyward's operators can act on it)" })
  managedBy: ManagingOrganization | null;
}

@InputType()
export class UpdateMeInput implements GqlInputOf<UpdateMeInput, "users", "updateMe"> {
  @Field(() => String, { nullable: true }) fullName?: string | null;
  @Field(() => String, { nullable: true }) avatarUrl?: string | null;
}

@InputType()
export class DeleteMeInput implements GqlInputOf<DeleteMeInput, "users", "deleteMe"> {
  @Field(() => String, { nullable: true, description: "Required when the account has a password" }) password?: string;
}
