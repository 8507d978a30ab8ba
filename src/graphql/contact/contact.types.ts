import { Field, InputType } from "type-graphql";
import type { GqlInputOf } from "../common/inputs.js";

@InputType()
export class ContactInput implements GqlInputOf<ContactInput, "contact", "submit"> {
  @Field(() => String) name: string;
  @Field(() => String) email: string;
  @Field(() => String) subject: string;
  @Field(() => String) message: string;
  @Field(() => String, { nullable: true, description: "Leave empty (spam trap)" }) website?: string;
}
