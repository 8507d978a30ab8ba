import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { loose } from "../common/inputs.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { ApiKey, ApiKeyInput, CreatedApiKey, UpdateApiKeyInput } from "./api-keys.types.js";

@Resolver()
export class ApiKeysResolver {
  constructor(private readonly s: Pick<Services, "apiKeys">) {}

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [ApiKey])
  apiKeys(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.apiKeys.list(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => CreatedApiKey, { description: "The secret is in the answer, once" })
  createApiKey(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => ApiKeyInput) input: ApiKeyInput) {
    return this.s.apiKeys.create(ctx, orgId, loose(omitNulls({ ...input })));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => ApiKey)
  updateApiKey(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("keyId", () => ID) keyId: string, @Arg("input", () => UpdateApiKeyInput) input: UpdateApiKeyInput) {
    return this.s.apiKeys.update(ctx, orgId, keyId, loose(input));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => ApiKey)
  revokeApiKey(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("keyId", () => ID) keyId: string,
    @Arg("reason", () => String, { nullable: true }) reason?: string,
  ) {
    return this.s.apiKeys.revoke(ctx, orgId, keyId, omitNulls({ reason }));
  }
}
