import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import type { GqlInputOf } from "../common/inputs.js";
import type { ViewOf } from "../common/views.js";

@ObjectType({ description: "An initial access token for Dynamic Client Registration (RFC 7591): each client registered with it belongs to its organization" })
export class RegistrationToken implements ViewOf<"oidcRegistration", "listTokens"> {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String) name: string;
  @Field(() => String, { description: "The token's public start, to recognise it" }) prefix: string;
  @Field(() => Int, { nullable: true, description: "How many clients it may register; null: any number until it expires" }) maxUses: number | null;
  @Field(() => Int) uses: number;
  @Field(() => Date) expiresAt: Date;
  @Field(() => Date, { nullable: true }) lastUsedAt: Date | null;
  @Field(() => Date, { nullable: true }) revokedAt: Date | null;
  @Field(() => ID, { nullable: true }) createdBy: string | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@ObjectType()
export class CreatedRegistrationToken extends RegistrationToken implements ViewOf<"oidcRegistration", "createToken"> {
  @Field(() => String, { description: "The token (Authorization: Bearer at /api/v1/oidc/register): shown this once, never again" }) token: string;
}

@InputType()
export class RegistrationTokenInput implements GqlInputOf<RegistrationTokenInput, "oidcRegistration", "createToken"> {
  @Field(() => String) name: string;
  @Field(() => Int, { nullable: true, description: "Seconds until it expires: 300 to 7776000 (90 days); default 604800 (7 days)" }) expiresIn?: number;
  @Field(() => Int, { nullable: true, description: "How many clients it may register (1 to 10000); default: any number until it expires" }) maxUses?: number;
}
