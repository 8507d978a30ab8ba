import { Field, ID, Int, ObjectType } from "type-graphql";
import { Paged } from "../common/paged.js";
import type { ViewOf } from "../common/views.js";

type OutboxEmailView = ViewOf<"outbox", "list">["items"][number];

@ObjectType()
export class OutboxEmail implements OutboxEmailView {
  @Field(() => ID) id: string;
  @Field(() => String) template: string;
  @Field(() => String) toAddress: string;
  @Field(() => String) status: OutboxEmailView["status"];
  @Field(() => Int) attempts: number;
  @Field(() => Date) nextAttemptAt: Date;
  @Field(() => String, { nullable: true }) lastError: string | null;
  @Field(() => String, { nullable: true }) provider: string | null;
  @Field(() => Date, { nullable: true }) sentAt: Date | null;
  @Field(() => Date) createdAt: Date;
}

@ObjectType()
export class OutboxPage extends Paged(OutboxEmail) {}

@ObjectType()
export class RetriedEmail implements ViewOf<"outbox", "retry"> {
  @Field(() => ID) id: string;
}
