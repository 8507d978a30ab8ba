import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { message, MessagePayload } from "../common/common.types.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { scope } from "../scope.js";
import { CreateOrganizationInput, Member, Organization, RemoveMemberPayload, SimpleOrganization, TransferOwnershipPayload, UpdateOrganizationInput } from "./orgs.types.js";

/** Organizations and their members (people join through invites/). */
@Resolver()
export class OrgsResolver {
  constructor(private readonly s: Pick<Services, "members" | "orgs">) {}

  @Authorized()
  @scope("orgs:read")
  @Query(() => [Organization], { description: "Your organizations with your role" })
  myOrganizations(@Ctx() { ctx }: GqlContext) {
    return this.s.orgs.listMine(ctx);
  }

  @Authorized()
  @scope("orgs:read")
  @Query(() => [SimpleOrganization])
  myOrganizationsSimple(@Ctx() { ctx }: GqlContext) {
    return this.s.orgs.listMineSimple(ctx);
  }

  @Authorized()
  @org(OrgRole.guest)
  @scope("orgs:read")
  @Query(() => Organization)
  organization(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.orgs.get(ctx, orgId);
  }

  @Authorized()
  @Mutation(() => Organization)
  createOrganization(@Ctx() { ctx }: GqlContext, @Arg("input", () => CreateOrganizationInput) input: CreateOrganizationInput) {
    return this.s.orgs.create(ctx, input);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => Organization)
  updateOrganization(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => UpdateOrganizationInput) input: UpdateOrganizationInput) {
    return this.s.orgs.update(ctx, orgId, input);
  }

  @Authorized()
  @org(OrgRole.owner)
  @Mutation(() => MessagePayload)
  async deleteOrganization(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("confirm", () => Boolean, { nullable: true }) confirm?: boolean) {
    await this.s.orgs.delete(ctx, orgId, omitNulls({ confirm }));
    return message("Organization deleted");
  }

  @Authorized()
  @org(OrgRole.owner)
  @Mutation(() => TransferOwnershipPayload)
  transferOwnership(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("newOwnerUserId", () => ID) newOwnerUserId: string) {
    return this.s.orgs.transferOwnership(ctx, orgId, { newOwnerUserId });
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => [Member])
  members(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.members.list(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => RemoveMemberPayload)
  async removeMember(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("userId", () => ID) userId: string): Promise<RemoveMemberPayload> {
    const { receiptId } = await this.s.members.remove(ctx, orgId, userId);
    return { ...message("Member removed"), receiptId };
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => Member)
  changeMemberRole(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("userId", () => ID) userId: string, @Arg("role", () => OrgRole) role: OrgRole) {
    return this.s.members.changeRole(ctx, orgId, userId, { role });
  }

  @Authorized()
  @org(OrgRole.guest)
  @Mutation(() => MessagePayload)
  async leaveOrganization(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    await this.s.members.leave(ctx, orgId);
    return message("You left the organization");
  }
}
