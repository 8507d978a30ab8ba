import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { loose } from "../common/inputs.js";
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
  MyMembership,
  MyOrgPrincipals,
  Principal,
  PrincipalInput,
  UpdateDepartmentInput,
  UpdatePrincipalInput,
} from "./directory.types.js";
import { orgGroupResolver } from "./org-group.resolver.js";

/** The signed-in user's own place in the directory, across organizations. */
@Resolver()
export class DirectoryResolver {
  constructor(private readonly s: Pick<Services, "myDirectory">) {}

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
}

/** Departments: the shared group operations, plus their principals and certificate policy. */
@Resolver()
export class DepartmentsResolver extends orgGroupResolver({ service: "departments", name: "Department", Item: Department, Input: DepartmentInput, UpdateInput: UpdateDepartmentInput }) {
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
    return this.s.departments.putCertPolicy(ctx, orgId, departmentId, loose(omitNulls(input)));
  }
}

/** Principals: the shared group operations, plus the departments that grant them. */
@Resolver()
export class PrincipalsResolver extends orgGroupResolver({ service: "principals", name: "Principal", Item: Principal, Input: PrincipalInput, UpdateInput: UpdatePrincipalInput }) {
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
