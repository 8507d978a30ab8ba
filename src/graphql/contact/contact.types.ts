import { Field, InputType } from "type-graphql";

@InputType()
export class ContactInput {
  @Field(() => String) name: string;
  @Field(() => String) email: string;
  @Field(() => String) subject: string;
  @Field(() => String) message: string;
  @Field(() => String, { nullable: true, description: "Leave empty (spam trap)" }) website?: string;
}
