import { Arg, Ctx, Mutation, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { MessagePayload } from "../common/common.types.js";
import type { GqlContext } from "../context.js";
import { ContactInput } from "./contact.types.js";

@Resolver()
export class ContactResolver {
  constructor(private readonly s: Pick<Services, "contact">) {}

  @Mutation(() => MessagePayload, { description: "The public contact form" })
  submitContact(@Ctx() { ctx }: GqlContext, @Arg("input", () => ContactInput) input: ContactInput) {
    return this.s.contact.submit(ctx, input);
  }
}
