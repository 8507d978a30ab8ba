import { Arg, Authorized, Ctx, ID, Mutation, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { SUPERADMIN } from "../auth-checker.js";
import type { GqlContext } from "../context.js";
import { User } from "../types/user.types.js";

@Resolver()
export class AdminResolver {
  constructor(private readonly s: Services) {}

  @Authorized(SUPERADMIN)
  @Mutation(() => User, { description: "Suspend an account: its sessions end at once" })
  suspendUser(
    @Ctx() { ctx }: GqlContext,
    @Arg("userId", () => ID) userId: string,
    @Arg("reason", () => String, { nullable: true }) reason?: string,
  ) {
    return this.s.adminUsers.suspend(ctx, userId, { reason: reason ?? undefined });
  }

  @Authorized(SUPERADMIN)
  @Mutation(() => User)
  unsuspendUser(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string) {
    return this.s.adminUsers.unsuspend(ctx, userId);
  }
}
