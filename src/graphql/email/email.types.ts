import { Field, ID, Int, ObjectType } from "type-graphql";
import { Paged } from "../common/paged.js";

@ObjectType()
export class OutboxEmail {
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
export class OutboxPage extends Paged(OutboxEmail) {}

@ObjectType()
export class RetriedEmail {
  @Field(() => ID) id: string;
}
