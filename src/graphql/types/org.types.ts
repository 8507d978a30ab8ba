import { Field, ID, InputType, Int, ObjectType, registerEnumType } from "type-graphql";
import { AuditEntry } from "./audit.types.js";
import { ManagingOrganization, User } from "./user.types.js";

export enum OrgRole {
  owner = "owner",
  admin = "admin",
  member = "member",
  guest = "guest",
}
registerEnumType(OrgRole, { name: "OrgRole", description: "owner > admin > member > guest (guests read, nothing else)" });

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
export class OrgRef {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
}

@ObjectType()
export class OrgMembershipRef {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => OrgRole) role: OrgRole;
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

@InputType()
export class AddMemberInput {
  @Field(() => String) email: string;
  @Field(() => OrgRole, { nullable: true, defaultValue: OrgRole.member }) role?: OrgRole;
  @Field(() => String, { nullable: true }) fullName?: string;
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

@ObjectType()
export class Invite {
  @Field(() => ID) id: string;
  @Field(() => String) email: string;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => ID) invitedBy: string;
  @Field(() => Date) expiresAt: Date;
  @Field(() => Date) createdAt: Date;
  @Field(() => Boolean) expired: boolean;
}

@InputType()
export class InviteInput {
  @Field(() => String) email: string;
  @Field(() => OrgRole, { nullable: true, defaultValue: OrgRole.member }) role?: OrgRole;
}

@ObjectType()
export class InvitePreview {
  @Field(() => String) email: string;
  @Field(() => OrgRef) organization: OrgRef;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => Date) expiresAt: Date;
  @Field(() => Boolean) userExists: boolean;
  @Field(() => Boolean, { description: "Accepting creates an account this organization manages" }) managed: boolean;
}

@InputType()
export class AcceptInviteInput {
  @Field(() => String, { nullable: true }) fullName?: string;
  @Field(() => String, { nullable: true, description: "Required when the invitation registers a new account" }) password?: string;
  @Field(() => String, { nullable: true }) passwordConfirm?: string;
}

@ObjectType()
export class AcceptInvitePayload {
  @Field(() => OrgRef) organization: OrgRef;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => User) user: User;
}

@ObjectType()
export class MyInvite {
  @Field(() => ID) id: string;
  @Field(() => OrgRef) organization: OrgRef;
  @Field(() => OrgRole) role: OrgRole;
  @Field(() => Date) expiresAt: Date;
}

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

@ObjectType()
export class ApiKey {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => String, { description: "The key's public start, to recognise it" }) prefix: string;
  @Field(() => ID, { nullable: true }) createdBy: string | null;
  @Field(() => Date, { nullable: true }) lastUsedAt: Date | null;
  @Field(() => Date, { nullable: true }) revokedAt: Date | null;
  @Field(() => String, { nullable: true }) revokeReason: string | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@ObjectType()
export class CreatedApiKey extends ApiKey {
  @Field(() => String, { description: "The secret: shown this once, never again" }) key: string;
}

@InputType()
export class ApiKeyInput {
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description?: string;
}

@InputType()
export class UpdateApiKeyInput {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string | null;
}

@ObjectType()
export class ActivityPage {
  @Field(() => [AuditEntry]) items: AuditEntry[];
  @Field(() => String, { nullable: true, description: "Pass as `cursor` for the next page" }) nextCursor: string | null;
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

@InputType()
export class ActivateAccountInput {
  @Field(() => String) code: string;
  @Field(() => String) password: string;
  @Field(() => String, { nullable: true }) passwordConfirm?: string;
  @Field(() => String, { nullable: true }) fullName?: string;
}

