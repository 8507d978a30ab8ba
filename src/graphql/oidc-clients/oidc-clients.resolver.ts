import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { SUPERADMIN } from "../auth-checker.js";
import { loose } from "../common/inputs.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { ConfigureOidcClientInput, CreatedOidcClient, OidcClient, OidcClientInput, OidcClientSecret, OidcConsent, UpdateOidcClientInput } from "./oidc-clients.types.js";

/**
 * OpenID Connect relying parties and the consents users gave them. Client inputs go to the service
 * as sent, nulls included: it refuses a null field (VALIDATION_ERROR, as REST answers a JSON null)
 * rather than reading it as "default", so no omitNulls here.
 */
@Resolver()
export class OidcResolver {
  constructor(private readonly s: Pick<Services, "oidcClientAdmin" | "oidcClients">) {}

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [OidcClient])
  oidcClients(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.oidcClients.list(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => OidcClient)
  oidcClient(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("clientId", () => String) clientId: string) {
    return this.s.oidcClients.get(ctx, orgId, clientId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => CreatedOidcClient, { description: "A confidential client's secret is in the answer, once" })
  createOidcClient(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => OidcClientInput) input: OidcClientInput) {
    return this.s.oidcClients.create(ctx, orgId, loose(input));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => OidcClient)
  updateOidcClient(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("clientId", () => String) clientId: string,
    @Arg("input", () => UpdateOidcClientInput) input: UpdateOidcClientInput,
  ) {
    return this.s.oidcClients.update(ctx, orgId, clientId, loose(input));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => OidcClientSecret, { description: "The new secret is in the answer, once; the old one stops working" })
  rotateOidcClientSecret(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("clientId", () => String) clientId: string) {
    return this.s.oidcClients.rotateSecret(ctx, orgId, clientId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => Boolean, { description: "Deletes the client and every token issued to it" })
  async deleteOidcClient(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("clientId", () => String) clientId: string) {
    await this.s.oidcClients.delete(ctx, orgId, clientId);
    return true;
  }

  @Authorized()
  @Query(() => [OidcConsent], { description: "Applications the signed-in user allowed to access their account" })
  myConsents(@Ctx() { ctx }: GqlContext) {
    return this.s.oidcClients.myConsents(ctx);
  }

  @Authorized()
  @Mutation(() => Boolean, { description: "Withdraws consent; the application's tokens for this user stop working" })
  async revokeConsent(@Ctx() { ctx }: GqlContext, @Arg("clientId", () => String) clientId: string) {
    await this.s.oidcClients.revokeConsent(ctx, clientId);
    return true;
  }

  @Authorized(SUPERADMIN)
  @Query(() => [OidcClient], { description: "Keyward's built-in clients (superadmins)" })
  builtInOidcClients(@Ctx() { ctx }: GqlContext) {
    return this.s.oidcClientAdmin.listBuiltIn(ctx);
  }

  @Authorized(SUPERADMIN)
  @Query(() => OidcClient, { description: "Any client, built-in or registered by an organization (superadmins)" })
  adminOidcClient(@Ctx() { ctx }: GqlContext, @Arg("clientId", () => String) clientId: string) {
    return this.s.oidcClientAdmin.get(ctx, clientId);
  }

  @Authorized(SUPERADMIN)
  @Mutation(() => OidcClient, { description: "Set the Keyward API scopes a client may request, or a built-in client's name and lifetimes (superadmins)" })
  configureOidcClient(@Ctx() { ctx }: GqlContext, @Arg("clientId", () => String) clientId: string, @Arg("input", () => ConfigureOidcClientInput) input: ConfigureOidcClientInput) {
    return this.s.oidcClientAdmin.configure(ctx, clientId, input);
  }
}
