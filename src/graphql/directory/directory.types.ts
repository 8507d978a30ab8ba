import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { GqlInputOf } from "../common/inputs.js";
import { OrgRole } from "../common/org-role.js";
import type { ViewOf } from "../common/views.js";

@ObjectType()
export class Department implements ViewOf<"departments", "get"> {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => Boolean) canSudo: boolean;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@InputType()
export class DepartmentInput implements GqlInputOf<DepartmentInput, "departments", "create"> {
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => Boolean, { nullable: true, defaultValue: false }) canSudo?: boolean;
}

@InputType()
export class UpdateDepartmentInput implements GqlInputOf<UpdateDepartmentInput, "departments", "update"> {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => Boolean, { nullable: true }) canSudo?: boolean;
}

// What adding a member answers; the member listings add addedAt.
@ObjectType()
export class DirectoryMember implements ViewOf<"departments", "addMember"> {
  @Field(() => ID) userId: string;
  @Field(() => String) email: string;
  @Field(() => String, { nullable: true }) fullName: string | null;
  @Field(() => Date, { nullable: true }) addedAt?: Date;
}

@ObjectType()
export class Principal implements ViewOf<"principals", "get"> {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@InputType()
export class PrincipalInput implements GqlInputOf<PrincipalInput, "principals", "create"> {
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description?: string;
}

@InputType()
export class UpdatePrincipalInput implements GqlInputOf<UpdatePrincipalInput, "principals", "update"> {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string | null;
}

@ObjectType()
export class CertPolicy implements ViewOf<"departments", "getCertPolicy"> {
  @Field(() => ID) departmentId: string;
  @Field(() => Boolean) allowUserExpiry: boolean;
  @Field(() => Int) defaultExpiryHours: number;
  @Field(() => Int) maxExpiryHours: number;
  @Field(() => [String]) allowedExtensions: string[];
  @Field(() => [String]) customExtensions: string[];
  @Field(() => Boolean, { description: "Only FIDO2 security keys (sk-ssh-ed25519, sk-ecdsa-sha2-nistp256) are certified" }) requireHardwareKey: boolean;
  @Field(() => Boolean, { description: "The security key's proof of possession showed a touch; certificates never carry no-touch-required" }) requireTouch: boolean;
  @Field(() => Boolean, { description: "The security key's proof of possession showed a PIN or biometric check; certificates carry verify-required" }) requireVerify: boolean;
  @Field(() => [String]) allExtensions: string[];
  @Field(() => [String]) standardExtensions: string[];
  @Field(() => Boolean, { description: "No policy stored: the defaults apply" }) isDefault: boolean;
}

@InputType()
export class CertPolicyInput implements GqlInputOf<CertPolicyInput, "departments", "putCertPolicy"> {
  @Field(() => Boolean, { nullable: true }) allowUserExpiry?: boolean;
  @Field(() => Int, { nullable: true }) defaultExpiryHours?: number;
  @Field(() => Int, { nullable: true }) maxExpiryHours?: number;
  @Field(() => [String], { nullable: true }) allowedExtensions?: string[];
  @Field(() => [String], { nullable: true }) customExtensions?: string[];
  @Field(() => Boolean, { nullable: true }) requireHardwareKey?: boolean;
  @Field(() => Boolean, { nullable: true, description: "Needs requireHardwareKey" }) requireTouch?: boolean;
  @Field(() => Boolean, { nullable: true, description: "Needs requireHardwareKey" }) requireVerify?: boolean;
}

type MyDepartmentView = ViewOf<"myDirectory", "memberships">["departments"][number];

@ObjectType()
export class MyDepartment implements MyDepartmentView {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => Boolean) canSudo: boolean;
}

// One type for two lists: memberships() says which department a principal comes through
// (viaDepartment), principals() whether it is held directly (direct); each list fills its own.
type MyPrincipalView = Omit<ViewOf<"myDirectory", "memberships">["principals"][number], "viaDepartment">;

@ObjectType()
export class MyPrincipal implements MyPrincipalView {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => ID, { nullable: true, description: "The department it comes through (null when held directly)" }) viaDepartment?: string | null;
  @Field(() => Boolean, { nullable: true }) direct?: boolean;
}

type MyMembershipView = ViewOf<"myDirectory", "memberships">;

@ObjectType()
export class MyMembership implements MyMembershipView {
  @Field(() => ID) orgId: string;
  @Field(() => String) orgName: string;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => [MyDepartment]) departments: MyDepartment[];
  @Field(() => [MyPrincipal]) principals: MyMembershipView["principals"];
}

type MyOrgPrincipalsView = ViewOf<"myDirectory", "principals">;

@ObjectType()
export class MyOrgPrincipals implements MyOrgPrincipalsView {
  @Field(() => ID) orgId: string;
  @Field(() => String) orgName: string;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => Boolean) isAdmin: boolean;
  @Field(() => [MyPrincipal]) myPrincipals: MyOrgPrincipalsView["myPrincipals"];
  @Field(() => [MyPrincipal], { description: "Every principal of the organization (admins only)" }) allPrincipals: MyOrgPrincipalsView["allPrincipals"];
}
