import { Arg, Authorized, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { SUPERADMIN } from "../auth-checker.js";
import type { GqlContext } from "../context.js";
import { MessagePayload } from "../types/common.types.js";

@InputType()
class ContactInput {
  @Field(() => String) name: string;
  @Field(() => String) email: string;
  @Field(() => String) subject: string;
  @Field(() => String) message: string;
  @Field(() => String, { nullable: true, description: "Leave empty (spam trap)" }) website?: string;
}

@ObjectType()
class OutboxEmail {
  @Field(() => ID) id: string;
  @Field(() => String) template: string;
  @Field(() => String) toAddress: string;
  @Field(() => String) status: string;
  @Field(() => Int) attempts: number;
  @Field(() => Date) nextAttemptAt: Date;
  @Field(() => String, { nullable: true }) lastError: string | null;
  @Field(() => String, { nullable: true }) provider: string | null;
  @Field(() => Date, { nullable: true }) sentAt: Date | null;
  @Field(() => Date) createdAt: Date;
}

@ObjectType()
class OutboxPage {
  @Field(() => [OutboxEmail]) items: OutboxEmail[];
  @Field(() => Int) count: number;
  @Field(() => Int) page: number;
  @Field(() => Int) perPage: number;
  @Field(() => Int) pages: number;
}

@ObjectType()
class RetriedEmail {
  @Field(() => ID) id: string;
}

@Resolver()
export class MiscResolver {
  constructor(private readonly s: Services) {}

  @Mutation(() => MessagePayload, { description: "The public contact form" })
  submitContact(@Ctx() { ctx }: GqlContext, @Arg("input", () => ContactInput) input: ContactInput) {
    return this.s.contact.submit(ctx, input);
  }

  @Authorized(SUPERADMIN)
  @Query(() => OutboxPage)
  emailOutbox(
    @Ctx() { ctx }: GqlContext,
    @Arg("status", () => String, { nullable: true }) status?: string,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    return this.s.outbox.list(ctx, { status: status ?? undefined, page: page ?? undefined, perPage: perPage ?? undefined });
  }

  @Authorized(SUPERADMIN)
  @Mutation(() => RetriedEmail)
  retryEmail(@Ctx() { ctx }: GqlContext, @Arg("id", () => ID) id: string) {
    return this.s.outbox.retry(ctx, id);
  }
}
