import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { setSessionCookie } from "../../http/session.js";
import { message, MessagePayload } from "../common/common.types.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { AcceptInviteInput, AcceptInvitePayload, ActivateAccountInput, AddMemberInput, Invite, InviteInput, InvitePreview, MyInvite } from "./invites.types.js";

/** Joining an organization by consent: invitations, and activating an account an organization created. */
@Resolver()
export class InvitesResolver {
  constructor(private readonly s: Pick<Services, "invites">) {}

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
  @Mutation(() => Invite, { description: "Send an open invitation again: a new link (the old one stops working), valid 7 days" })
  resendInvite(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("inviteId", () => ID) inviteId: string) {
    return this.s.invites.resend(ctx, orgId, inviteId);
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

  @Mutation(() => MessagePayload, { description: "Activate an account an administrator created, choosing its password" })
  activateAccount(@Ctx() { ctx }: GqlContext, @Arg("input", () => ActivateAccountInput) input: ActivateAccountInput) {
    return this.s.invites.activate(ctx, input);
  }
}
