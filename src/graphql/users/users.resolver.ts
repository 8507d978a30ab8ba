import { Arg, Args, Authorized, Ctx, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { AuditLogArgs, AuditLogPage } from "../audit/audit.types.js";
import { message, MessagePayload } from "../common/common.types.js";
import { omitNulls } from "../common/nulls.js";
import type { GqlContext } from "../context.js";
import { scope } from "../scope.js";
import { DeleteMeInput, Me, UpdateMeInput, User } from "./users.types.js";

@Resolver()
export class UsersResolver {
  constructor(private readonly s: Pick<Services, "users">) {}

  @Authorized()
  @scope("profile:read")
  @Query(() => Me, { description: "The signed-in user" })
  me(@Ctx() { ctx }: GqlContext) {
    return this.s.users.getMe(ctx);
  }

  @Authorized()
  @Mutation(() => User)
  updateMe(@Ctx() { ctx }: GqlContext, @Arg("input", () => UpdateMeInput) input: UpdateMeInput) {
    return this.s.users.updateMe(ctx, input);
  }

  @Authorized()
  @Mutation(() => MessagePayload, { description: "Soft-delete your account" })
  async deleteMe(@Ctx() { ctx }: GqlContext, @Arg("input", () => DeleteMeInput, { nullable: true }) input?: DeleteMeInput) {
    await this.s.users.deleteMe(ctx, input ?? {});
    return message("Account deleted");
  }

  @Authorized()
  @Query(() => AuditLogPage, { description: "Your own audit log, newest first" })
  myAuditLog(@Ctx() { ctx }: GqlContext, @Args(() => AuditLogArgs) args: AuditLogArgs) {
    return this.s.users.listMyAuditLog(ctx, omitNulls(args));
  }
}
