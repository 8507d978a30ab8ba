import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { SUPERADMIN } from "../auth-checker.js";
import { loose } from "../common/inputs.js";
import { omitNulls } from "../common/nulls.js";
import type { GqlContext } from "../context.js";
import { OutboxPage, RetriedEmail } from "./email.types.js";

/** The email outbox, for superadmins: what was sent, what failed, and a retry. */
@Resolver()
export class EmailResolver {
  constructor(private readonly s: Pick<Services, "outbox">) {}

  @Authorized(SUPERADMIN)
  @Query(() => OutboxPage)
  emailOutbox(
    @Ctx() { ctx }: GqlContext,
    @Arg("status", () => String, { nullable: true }) status?: string,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    return this.s.outbox.list(ctx, loose(omitNulls({ status, page, perPage })));
  }

  @Authorized(SUPERADMIN)
  @Mutation(() => RetriedEmail)
  retryEmail(@Ctx() { ctx }: GqlContext, @Arg("id", () => ID) id: string) {
    return this.s.outbox.retry(ctx, id);
  }
}
