import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { message, MessagePayload } from "../common/common.types.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { scope } from "../scope.js";
import {
  CertPolicy,
  CertPolicyInput,
  Department,
  DepartmentInput,
  DirectoryMember,
  MyMembership,
  MyOrgPrincipals,
  Principal,
  PrincipalInput,
  UpdateDepartmentInput,
  UpdatePrincipalInput,
} from "./directory.types.js";

@Resolver()
export class DirectoryResolver {
  constructor(private readonly s: Pick<Services, "departments" | "myDirectory" | "principals">) {}

  @Authorized()
  @scope("orgs:read")
  @Query(() => [MyMembership], { description: "Per organization: your role, departments and principals" })
  myMemberships(@Ctx() { ctx }: GqlContext) {
    return this.s.myDirectory.memberships(ctx);
  }

  @Authorized()
  @Query(() => [MyOrgPrincipals])
  myPrincipals(@Ctx() { ctx }: GqlContext) {
    return this.s.myDirectory.principals(ctx);
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => [Department])
  departments(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.departments.list(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => Department)
  department(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("departmentId", () => ID) departmentId: string) {
    return this.s.departments.get(ctx, orgId, departmentId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => Department)
  createDepartment(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => DepartmentInput) input: DepartmentInput) {
    return this.s.departments.create(ctx, orgId, input);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => Department)
  updateDepartment(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("departmentId", () => ID) departmentId: string,
    @Arg("input", () => UpdateDepartmentInput) input: UpdateDepartmentInput,
  ) {
    return this.s.departments.update(ctx, orgId, departmentId, input);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => MessagePayload)
  async deleteDepartment(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("departmentId", () => ID) departmentId: string) {
    await this.s.departments.delete(ctx, orgId, departmentId);
    return message("Department deleted");
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => [DirectoryMember])
  departmentMembers(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("departmentId", () => ID) departmentId: string) {
    return this.s.departments.listMembers(ctx, orgId, departmentId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => DirectoryMember)
  addDepartmentMember(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("departmentId", () => ID) departmentId: string, @Arg("email", () => String) email: string) {
    return this.s.departments.addMember(ctx, orgId, departmentId, { email });
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => MessagePayload)
  async removeDepartmentMember(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("departmentId", () => ID) departmentId: string,
    @Arg("userId", () => ID) userId: string,
  ) {
    await this.s.departments.removeMember(ctx, orgId, departmentId, userId);
    return message("Member removed");
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => [Principal])
  departmentPrincipals(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("departmentId", () => ID) departmentId: string) {
    return this.s.departments.listPrincipals(ctx, orgId, departmentId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => CertPolicy)
  certPolicy(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("departmentId", () => ID) departmentId: string) {
    return this.s.departments.getCertPolicy(ctx, orgId, departmentId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => CertPolicy)
  updateCertPolicy(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("departmentId", () => ID) departmentId: string,
    @Arg("input", () => CertPolicyInput) input: CertPolicyInput,
  ) {
    return this.s.departments.putCertPolicy(ctx, orgId, departmentId, omitNulls(input));
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => [Principal])
  principals(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.principals.list(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => Principal)
  principal(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("principalId", () => ID) principalId: string) {
    return this.s.principals.get(ctx, orgId, principalId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => Principal)
  createPrincipal(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => PrincipalInput) input: PrincipalInput) {
    return this.s.principals.create(ctx, orgId, input);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => Principal)
  updatePrincipal(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("principalId", () => ID) principalId: string,
    @Arg("input", () => UpdatePrincipalInput) input: UpdatePrincipalInput,
  ) {
    return this.s.principals.update(ctx, orgId, principalId, input);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => MessagePayload)
  async deletePrincipal(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("principalId", () => ID) principalId: string) {
    await this.s.principals.delete(ctx, orgId, principalId);
    return message("Principal deleted");
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => [DirectoryMember])
  principalMembers(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("principalId", () => ID) principalId: string) {
    return this.s.principals.listMembers(ctx, orgId, principalId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => DirectoryMember)
  addPrincipalMember(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("principalId", () => ID) principalId: string, @Arg("email", () => String) email: string) {
    return this.s.principals.addMember(ctx, orgId, principalId, { email });
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => MessagePayload)
  async removePrincipalMember(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("principalId", () => ID) principalId: string,
    @Arg("userId", () => ID) userId: string,
  ) {
    await this.s.principals.removeMember(ctx, orgId, principalId, userId);
    return message("Member removed");
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => [Department])
  principalDepartments(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("principalId", () => ID) principalId: string) {
    return this.s.principals.listDepartments(ctx, orgId, principalId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => MessagePayload)
  async linkPrincipalDepartment(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("principalId", () => ID) principalId: string,
    @Arg("departmentId", () => ID) departmentId: string,
  ) {
    await this.s.principals.linkDepartment(ctx, orgId, principalId, departmentId);
    return message("Principal linked to department");
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => MessagePayload)
  async unlinkPrincipalDepartment(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("principalId", () => ID) principalId: string,
    @Arg("departmentId", () => ID) departmentId: string,
  ) {
    await this.s.principals.unlinkDepartment(ctx, orgId, principalId, departmentId);
    return message("Principal unlinked from department");
  }
}

