import { Field, ID, InputType, ObjectType } from "type-graphql";
import { API_KEY_SCOPE_NAMES } from "../../lib/api-key-scopes.js";
import type { GqlInputOf } from "../common/inputs.js";
import type { ViewOf } from "../common/views.js";

const SCOPES = `What the key may do: ${API_KEY_SCOPE_NAMES.join(", ")}`;

@ObjectType()
export class ApiKey implements ViewOf<"apiKeys", "list"> {
  @Field(() => ID) id: string;
  @Field(() => ID) organizationId: string;
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => String, { description: "The key's public start, to recognise it" }) prefix: string;
  @Field(() => [String], { description: SCOPES }) scopes: string[];
  @Field(() => ID, { nullable: true }) createdBy: string | null;
  @Field(() => Date, { nullable: true }) lastUsedAt: Date | null;
  @Field(() => Date, { nullable: true }) revokedAt: Date | null;
  @Field(() => String, { nullable: true }) revokeReason: string | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) updatedAt: Date;
}

@ObjectType()
export class CreatedApiKey extends ApiKey implements ViewOf<"apiKeys", "create"> {
  @Field(() => String, { description: "The secret: shown this once, never again" }) key: string;
}

@InputType()
export class ApiKeyInput implements GqlInputOf<ApiKeyInput, "apiKeys", "create"> {
  @Field(() => String) name: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => [String], { nullable: true, description: `${SCOPES} (default: ssh:sudo)` }) scopes?: string[];
}

@InputType()
export class UpdateApiKeyInput implements GqlInputOf<UpdateApiKeyInput, "apiKeys", "update"> {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => [String], { nullable: true, description: SCOPES }) scopes?: string[];
}
