import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { scope } from "../scope.js";
import { AccessPolicyInput, AccessRequest, AccessRequestPolicy, ApproveAccessInput, DepartmentAccessRequestPolicy, RequestAccessInput, RoleAccessRequestPolicy } from "./access-requests.types.js";

/** Just-in-time access requests (REST: access-requests.routes.ts, same service). */
@Resolver()
export class AccessRequestsResolver {
  constructor(private readonly s: Pick<Services, "accessRequests">) {}

  @Authorized()
  @scope("ssh:sign")
  @org(OrgRole.member)
  @Mutation(() => AccessRequest, { description: "Ask for a principal, a department's grants, or an organization role above yours (admin), for a bounded time, with a reason" })
  requestAccess(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => RequestAccessInput) input: RequestAccessInput) {
    return this.s.accessRequests.request(ctx, orgId, omitNulls(input));
  }

  @Authorized()
  @scope("ssh:sign")
  @Query(() => [AccessRequest], { description: "Your requests and grants in every organization" })
  myAccessRequests(@Ctx() { ctx }: GqlContext) {
    return this.s.accessRequests.mine(ctx);
  }

  @Authorized()
  @Query(() => [AccessRequest], { description: "Requests waiting for your decision in every organization where you approve (never your own)" })
  pendingApprovals(@Ctx() { ctx }: GqlContext) {
    return this.s.accessRequests.pending(ctx);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [AccessRequest], { description: "Admins: the organization's requests and grants" })
  accessRequests(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("state", () => String, { nullable: true }) state?: string) {
    return this.s.accessRequests.list(ctx, orgId, (state ? { state } : {}) as Parameters<Services["accessRequests"]["list"]>[2]);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => AccessRequest, { description: "Approve, possibly for less time than asked; nobody approves their own request" })
  approveAccessRequest(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("requestId", () => ID) requestId: string, @Arg("input", () => ApproveAccessInput, { nullable: true }) input?: ApproveAccessInput) {
    return this.s.accessRequests.approve(ctx, orgId, requestId, omitNulls(input ?? {}));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => AccessRequest, { description: "Reject, with a reason" })
  rejectAccessRequest(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("requestId", () => ID) requestId: string, @Arg("reason", () => String) reason: string) {
    return this.s.accessRequests.reject(ctx, orgId, requestId, { reason });
  }

  @Authorized()
  @scope("ssh:sign")
  @org(OrgRole.member)
  @Mutation(() => AccessRequest, { description: "Withdraw your pending request" })
  cancelAccessRequest(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("requestId", () => ID) requestId: string) {
    return this.s.accessRequests.cancel(ctx, orgId, requestId);
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => [AccessRequestPolicy], { description: "Which principals can be requested, by whom, for how long" })
  accessRequestPolicies(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.accessRequests.policies(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => AccessRequestPolicy, { description: "Set a principal's request policy" })
  setAccessRequestPolicy(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("principalId", () => ID) principalId: string, @Arg("input", () => AccessPolicyInput) input: AccessPolicyInput) {
    return this.s.accessRequests.setPolicy(ctx, orgId, principalId, omitNulls(input));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => AccessRequest, { description: "End a grant in force early, with a reason: the next ssh sign leaves it out" })
  revokeAccessGrant(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("requestId", () => ID) requestId: string, @Arg("reason", () => String) reason: string) {
    return this.s.accessRequests.revoke(ctx, orgId, requestId, { reason });
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => [DepartmentAccessRequestPolicy], { description: "Which departments' grants can be requested, by whom, for how long" })
  departmentAccessRequestPolicies(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.accessRequests.departmentPolicies(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => DepartmentAccessRequestPolicy, { description: "Set a department's request policy (its grants asked for a bounded time)" })
  setDepartmentAccessRequestPolicy(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("departmentId", () => ID) departmentId: string, @Arg("input", () => AccessPolicyInput) input: AccessPolicyInput) {
    return this.s.accessRequests.setDepartmentPolicy(ctx, orgId, departmentId, omitNulls(input));
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => [RoleAccessRequestPolicy], { description: "Which organization roles can be requested, by whom, for how long" })
  roleAccessRequestPolicies(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.accessRequests.rolePolicies(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.owner)
  @Mutation(() => RoleAccessRequestPolicy, { description: "Owners: set an organization role's request policy (admin; never owner)" })
  setRoleAccessRequestPolicy(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("role", () => String) role: string, @Arg("input", () => AccessPolicyInput) input: AccessPolicyInput) {
    return this.s.accessRequests.setRolePolicy(ctx, orgId, role, omitNulls(input));
  }
}
