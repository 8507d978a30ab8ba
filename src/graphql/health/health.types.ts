import { Field, ObjectType } from "type-graphql";
import type { ViewOf } from "../common/views.js";

@ObjectType()
export class Health implements ViewOf<"health", "health"> {
  @Field(() => String) status: string;
  @Field(() => String) service: string;
  @Field(() => String) version: string;
}
