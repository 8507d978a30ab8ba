import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { loose } from "../common/inputs.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { CreateOidcConnectionInput, CreateSamlConnectionInput, SsoConnection, UpdateSsoConnectionInput } from "./sso.types.js";

@Resolver()
export class SsoResolver {
  constructor(private readonly s: Pick<Services, "ssoConnections">) {}

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
