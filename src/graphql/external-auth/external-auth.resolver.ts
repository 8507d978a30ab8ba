import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { setOAuthBindingCookie, oauthBindingOf } from "../../http/session.js";
import type { GqlContext } from "../context.js";
import { loose } from "../common/inputs.js";
import { ExternalFlowStart, ExternalProvider, LinkedAccount, LinkedAccounts, OAuthProviderConfig, OAuthProviderConfigInput } from "./external-auth.types.js";

/** Sign in with GitHub / Google: everything except the browser redirects, which are REST-only. */
@Resolver()
export class ExternalAuthResolver {
  constructor(private readonly s: Pick<Services, "externalAuth" | "linkedAccounts" | "oauthProviders">) {}

  @Query(() => [ExternalProvider])
  externalProviders() {
    return this.s.oauthProviders.listPublic();
  }

  @Mutation(() => ExternalFlowStart, { description: "Start a login, register or link (signed in) flow with GitHub or Google; the callback URL is fixed by configuration" })
  async startExternalAuth(
    @Ctx() { ctx, req, res, config }: GqlContext,
    @Arg("provider", () => String) provider: string,
    @Arg("flow", () => String, { defaultValue: "login", description: "login, register or link" }) flow: string,
    @Arg("next", () => String, { nullable: true, description: "A path on this site to land on afterwards" }) next?: string,
  ) {
    const started = await this.s.externalAuth.start(ctx, provider, loose({ flow, ...(next ? { next } : {}) }), oauthBindingOf(req, config));
    setOAuthBindingCookie(res, config, started.binding, config.externalAuth.flowTtl);
    return { authorizationUrl: started.authorizationUrl, state: started.state };
  }

  @Authorized()
  @Query(() => LinkedAccounts)
  linkedAccounts(@Ctx() { ctx }: GqlContext) {
    return this.s.linkedAccounts.listMine(ctx);
  }

  @Authorized()
  @Mutation(() => Boolean, { description: "Refused when it is the account's last way to sign in" })
  async unlinkExternalAccount(@Ctx() { ctx }: GqlContext, @Arg("provider", () => String) provider: string) {
    await this.s.linkedAccounts.unlinkMine(ctx, provider);
    return true;
  }

  @Authorized()
  @Query(() => [LinkedAccount], { description: "The linked accounts of a user you administer" })
  adminUserLinkedAccounts(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string) {
    return this.s.linkedAccounts.listForUser(ctx, userId);
  }

  @Authorized()
  @Mutation(() => Boolean, { description: "Unlink a provider from a user you administer" })
  async adminUnlinkExternalAccount(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string, @Arg("provider", () => String) provider: string) {
    await this.s.linkedAccounts.unlinkForUser(ctx, userId, provider);
    return true;
  }

  @Authorized()
  @Query(() => [OAuthProviderConfig], { description: "Superadmins" })
  oauthProviderConfigs(@Ctx() { ctx }: GqlContext) {
    return this.s.oauthProviders.list(ctx);
  }

  @Authorized()
  @Mutation(() => OAuthProviderConfig, { description: "Superadmins: create or update a provider's configuration" })
  // The input goes as sent: the service refuses a null field (VALIDATION_ERROR), as REST does.
  async configureOAuthProvider(@Ctx() { ctx }: GqlContext, @Arg("provider", () => String) provider: string, @Arg("input", () => OAuthProviderConfigInput) input: OAuthProviderConfigInput) {
    return (await this.s.oauthProviders.configure(ctx, provider, input)).config;
  }

  @Authorized()
  @Mutation(() => Boolean, { description: "Superadmins: remove the stored configuration (environment variables apply again)" })
  async deleteOAuthProviderConfig(@Ctx() { ctx }: GqlContext, @Arg("provider", () => String) provider: string) {
    await this.s.oauthProviders.remove(ctx, provider);
    return true;
  }
}
