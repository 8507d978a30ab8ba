import { Field, ObjectType } from "type-graphql";

@ObjectType()
export class Health {
  @Field(() => String) status: string;
  @Field(() => String) service: string;
  @Field(() => String) version: string;
}
