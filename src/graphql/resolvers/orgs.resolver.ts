import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { setSessionCookie } from "../../http/session.js";
import type { GqlContext } from "../context.js";
import { scope } from "../scope.js";
import { message, MessagePayload } from "../types/common.types.js";
import {
  AcceptInviteInput,
  AcceptInvitePayload,
  AddMemberInput,
  CreateOrganizationInput,
  Invite,
  InviteInput,
  InvitePreview,
  Member,
  MyInvite,
  Organization,
  OrgRole,
  SimpleOrganization,
  TransferOwnershipPayload,
  UpdateOrganizationInput,
} from "../types/org.types.js";
import { org } from "../org-extension.js";

@Resolver()
export class OrgsResolver {
  constructor(private readonly s: Services) {}

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
    await this.s.orgs.delete(ctx, orgId, { confirm: confirm ?? undefined });
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
  @Mutation(() => Invite, {
    description: "Add a person by email: an existing account is invited; an address without one is invited to create an account this organization manages. The answer is the same either way",
  })
  addMember(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => AddMemberInput) input: AddMemberInput) {
    return this.s.invites.addMember(ctx, orgId, input);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => MessagePayload)
  async removeMember(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("userId", () => ID) userId: string) {
    await this.s.members.remove(ctx, orgId, userId);
    return message("Member removed");
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

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [Invite])
  invites(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.invites.list(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => Invite)
  sendInvite(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => InviteInput) input: InviteInput) {
    return this.s.invites.send(ctx, orgId, input);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => MessagePayload)
  async cancelInvite(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("inviteId", () => ID) inviteId: string) {
    await this.s.invites.cancel(ctx, orgId, inviteId);
    return message("Invite cancelled");
  }

  @Query(() => InvitePreview, { description: "What an invitation link is for" })
  invitePreview(@Ctx() { ctx }: GqlContext, @Arg("token", () => String) token: string) {
    return this.s.invites.lookup(ctx, token);
  }

  @Mutation(() => AcceptInvitePayload, { description: "Accept an invitation; a new account signs in through the session cookie" })
  async acceptInvite(
    @Ctx() { ctx, res, config }: GqlContext,
    @Arg("token", () => String) token: string,
    @Arg("input", () => AcceptInviteInput, { nullable: true }) input?: AcceptInviteInput,
  ) {
    const { session, ...result } = await this.s.invites.accept(ctx, token, input ?? {});
    if (session) setSessionCookie(res, config, session.token, null);
    return result;
  }

  @Authorized()
  @Query(() => [MyInvite])
  myInvites(@Ctx() { ctx }: GqlContext) {
    return this.s.invites.listMine(ctx);
  }

  @Authorized()
  @Mutation(() => AcceptInvitePayload)
  acceptMyInvite(@Ctx() { ctx }: GqlContext, @Arg("inviteId", () => ID) inviteId: string) {
    return this.s.invites.acceptMine(ctx, inviteId);
  }

  @Authorized()
  @Mutation(() => MessagePayload, { description: "Decline one of your invitations" })
  async declineMyInvite(@Ctx() { ctx }: GqlContext, @Arg("inviteId", () => ID) inviteId: string) {
    await this.s.invites.declineMine(ctx, inviteId);
    return message("Invitation declined");
  }
}

