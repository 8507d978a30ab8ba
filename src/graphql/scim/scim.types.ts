import { Field, ID, Int, ObjectType } from "type-graphql";
import type { ScimActivityView, ScimErrorView, ScimKeyActivityView } from "../../modules/scim/index.js";

@ObjectType({ description: "The last SCIM error answered to a key: what the identity provider was told" })
export class ScimActivityError implements ScimErrorView {
  @Field(() => Date) at: Date;
  @Field(() => Int, { description: "The HTTP status (400, 401, 403, 404, 409, 412, 413, 429, 500)" }) status: number;
  @Field(() => String, { nullable: true, description: "The RFC 7644 scimType (invalidFilter, uniqueness, …) when there is one" }) scimType: string | null;
  @Field(() => String) detail: string;
  @Field(() => String, { description: 'Method and path under /scim/v2 ("PATCH /Users/…")' }) request: string;
}

@ObjectType({ description: "What one SCIM key last did" })
export class ScimKeyActivity implements ScimKeyActivityView {
  @Field(() => ID) apiKeyId: string;
  @Field(() => String) name: string;
  @Field(() => String) prefix: string;
  @Field(() => Boolean, { description: "The key holds the scim scope" }) hasScimScope: boolean;
  @Field(() => Date, { nullable: true }) revokedAt: Date | null;
  @Field(() => Date, { nullable: true, description: "The last SCIM request (reads are recorded at most once a minute)" }) lastRequestAt: Date | null;
  @Field(() => String, { nullable: true }) lastRequest: string | null;
  @Field(() => Date, { nullable: true }) lastWriteAt: Date | null;
  @Field(() => String, { nullable: true, description: 'The last successful write ("PATCH User …")' }) lastWrite: string | null;
  @Field(() => ScimActivityError, { nullable: true }) lastError: ScimActivityError | null;
}

@ObjectType({ description: "An organization's SCIM provisioning: where to point the identity provider, and what its keys last did" })
export class ScimActivity implements ScimActivityView {
  @Field(() => ID) organizationId: string;
  @Field(() => String, { description: "The SCIM base URL (tenant URL) to paste into Okta or Entra ID" }) baseUrl: string;
  @Field(() => Date, { nullable: true, description: "The last SCIM request of any key: the last sync" }) lastRequestAt: Date | null;
  @Field(() => Date, { nullable: true }) lastWriteAt: Date | null;
  @Field(() => String, { nullable: true }) lastWrite: string | null;
  @Field(() => ScimActivityError, { nullable: true }) lastError: ScimActivityError | null;
  @Field(() => [ScimKeyActivity], { description: "Live keys with the scim scope, and any key that called SCIM" }) keys: ScimKeyActivity[];
}
