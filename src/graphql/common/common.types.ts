import { Field, ObjectType } from "type-graphql";

@ObjectType({ description: "A human-readable outcome of an operation that returns nothing else" })
export class MessagePayload {
  @Field(() => String)
  message: string;
}

export const message = (text: string): MessagePayload => ({ message: text });
