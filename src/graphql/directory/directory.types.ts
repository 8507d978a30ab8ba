import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { OrgRole } from "../common/org-role.js";

@ObjectType()
export class Department {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => Boolean) canSudo: boolean;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@InputType()
export class DepartmentInput {
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => Boolean, { nullable: true, defaultValue: false }) canSudo?: boolean;
}

@InputType()
export class UpdateDepartmentInput {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => Boolean, { nullable: true }) canSudo?: boolean;
}

@ObjectType()
export class DirectoryMember {
  @Field(() => ID) userId: string;
  @Field(() => String) email: string;
  @Field(() => String, { nullable: true }) fullName: string | null;
  @Field(() => Date, { nullable: true }) addedAt?: Date;
}

@ObjectType()
export class Principal {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@InputType()
export class PrincipalInput {
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description?: string;
}

@InputType()
export class UpdatePrincipalInput {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string | null;
}

@ObjectType()
export class CertPolicy {
  @Field(() => ID) departmentId: string;
  @Field(() => Boolean) allowUserExpiry: boolean;
  @Field(() => Int) defaultExpiryHours: number;
  @Field(() => Int) maxExpiryHours: number;
  @Field(() => [String]) allowedExtensions: string[];
  @Field(() => [String]) customExtensions: string[];
  @Field(() => [String]) allExtensions: string[];
  @Field(() => [String]) standardExtensions: string[];
  @Field(() => Boolean, { description: "No policy stored: the defaults apply" }) isDefault: boolean;
}

@InputType()
export class CertPolicyInput {
  @Field(() => Boolean, { nullable: true }) allowUserExpiry?: boolean;
  @Field(() => Int, { nullable: true }) defaultExpiryHours?: number;
  @Field(() => Int, { nullable: true }) maxExpiryHours?: number;
  @Field(() => [String], { nullable: true }) allowedExtensions?: string[];
  @Field(() => [String], { nullable: true }) customExtensions?: string[];
}

@ObjectType()
export class MyDepartment {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => Boolean) canSudo: boolean;
}

@ObjectType()
export class MyPrincipal {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => ID, { nullable: true, description: "The department it comes through (null when held directly)" }) viaDepartment?: string | null;
  @Field(() => Boolean, { nullable: true }) direct?: boolean;
}

@ObjectType()
export class MyMembership {
  @Field(() => ID) orgId: string;
  @Field(() => String) orgName: string;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => [MyDepartment]) departments: MyDepartment[];
  @Field(() => [MyPrincipal]) principals: MyPrincipal[];
}

@ObjectType()
export class MyOrgPrincipals {
  @Field(() => ID) orgId: string;
  @Field(() => String) orgName: string;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => Boolean) isAdmin: boolean;
  @Field(() => [MyPrincipal]) myPrincipals: MyPrincipal[];
  @Field(() => [MyPrincipal], { description: "Every principal of the organization (admins only)" }) allPrincipals: MyPrincipal[];
}
