import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import type { GqlContext } from "../context.js";
import { ActivityPage, ApiKey, ApiKeyInput, CreatedApiKey, OrgRole, UpdateApiKeyInput } from "../types/org.types.js";
import { org } from "../org-extension.js";

@Resolver()
export class ApiKeysResolver {
  constructor(private readonly s: Services) {}

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
    return this.s.apiKeys.create(ctx, orgId, input);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => ApiKey)
  updateApiKey(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("keyId", () => ID) keyId: string, @Arg("input", () => UpdateApiKeyInput) input: UpdateApiKeyInput) {
    return this.s.apiKeys.update(ctx, orgId, keyId, input);
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
    return this.s.apiKeys.revoke(ctx, orgId, keyId, { reason: reason ?? undefined });
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => ActivityPage, { description: "The organization's audit records, newest first" })
  organizationActivity(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("userId", () => ID, { nullable: true }) userId?: string,
    @Arg("action", () => String, { nullable: true }) action?: string,
    @Arg("limit", () => Int, { nullable: true }) limit?: number,
    @Arg("cursor", () => String, { nullable: true }) cursor?: string,
  ) {
    return this.s.activity.list(ctx, orgId, { userId: userId ?? undefined, action: action ?? undefined, limit: limit ?? undefined, cursor: cursor ?? undefined });
  }
}
