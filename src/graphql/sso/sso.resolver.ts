import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { setSamlBindingCookie, setSsoBindingCookie, ssoBindingOf } from "../../http/session.js";
import { loose } from "../common/inputs.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { CreateOidcConnectionInput, CreateSamlConnectionInput, MySsoConnection, SsoConnection, SsoLinkStart, UpdateSsoConnectionInput } from "./sso.types.js";

@Resolver()
export class SsoResolver {
  constructor(private readonly s: Pick<Services, "ssoConnections" | "ssoLinks" | "ssoSignIn">) {}

  @Authorized()
  @Query(() => [MySsoConnection], { description: "The enabled SSO connections of your organizations (any role) and whether you are linked to each" })
  mySsoConnections(@Ctx() { ctx }: GqlContext) {
    return this.s.ssoLinks.listMyConnections(ctx);
  }

  @Authorized()
  @Mutation(() => SsoLinkStart, { description: "Starts linking your account to one of your organization's connections: send the browser to authorizationUrl" })
  async startSsoLink(@Ctx() { ctx, req, res, config }: GqlContext, @Arg("connectionId", () => ID) connectionId: string) {
    const started = await this.s.ssoSignIn.startLink(ctx, connectionId, ssoBindingOf(req, config));
    setSsoBindingCookie(res, config, started.binding, config.externalAuth.flowTtl);
    if (started.kind === "saml") setSamlBindingCookie(res, config, started.binding, config.externalAuth.flowTtl);
    return { authorizationUrl: started.authorizationUrl };
  }

  @Authorized()
  @Mutation(() => Boolean, { description: "Unlinks one of your SSO identities (refused when your organization manages your account or requires SSO for your address)" })
  async unlinkSsoIdentity(@Ctx() { ctx }: GqlContext, @Arg("identityId", () => ID) identityId: string) {
    await this.s.ssoLinks.unlinkMine(ctx, identityId);
    return true;
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [SsoConnection], { description: "The organization's SSO connections (secrets are never returned)" })
  ssoConnections(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.ssoConnections.list(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => SsoConnection, { description: "Creates an OpenID Connect connection after reading the issuer's discovery document" })
  createOidcConnection(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => CreateOidcConnectionInput) input: CreateOidcConnectionInput) {
    return this.s.ssoConnections.createOidc(ctx, orgId, loose(omitNulls(input)));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => SsoConnection, { description: "Creates a SAML 2.0 connection (IdP metadata by URL or document, or by hand); Keyward generates the SP signing and encryption keys" })
  createSamlConnection(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => CreateSamlConnectionInput) input: CreateSamlConnectionInput) {
    return this.s.ssoConnections.createSaml(ctx, orgId, loose(omitNulls(input)));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => SsoConnection, { description: "Changes an SSO connection (an absent secret keeps the stored one)" })
  updateSsoConnection(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("connectionId", () => ID) connectionId: string,
    @Arg("input", () => UpdateSsoConnectionInput) input: UpdateSsoConnectionInput,
  ) {
    return this.s.ssoConnections.update(ctx, orgId, connectionId, loose(omitNulls(input)));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => SsoConnection, { description: "Removes an SSO connection (its people keep their accounts)" })
  deleteSsoConnection(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("connectionId", () => ID) connectionId: string) {
    return this.s.ssoConnections.remove(ctx, orgId, connectionId);
  }
}
