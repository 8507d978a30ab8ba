import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { CreatedRegistrationToken, RegistrationToken, RegistrationTokenInput } from "./registration.types.js";

/** Initial access tokens for Dynamic Client Registration: an organization's admins (or a superadmin) issue and revoke them. */
@Resolver()
export class RegistrationTokensResolver {
  constructor(private readonly s: Pick<Services, "oidcRegistration">) {}

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [RegistrationToken], { description: "The organization's initial access tokens, revoked ones included (superadmins: any organization's)" })
  registrationTokens(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.oidcRegistration.listTokens(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => CreatedRegistrationToken, { description: "The token is in the answer, once (superadmins: for any organization)" })
  createRegistrationToken(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => RegistrationTokenInput) input: RegistrationTokenInput) {
    return this.s.oidcRegistration.createToken(ctx, orgId, omitNulls({ ...input }));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => RegistrationToken, { description: "It registers nothing more; the clients it registered stay" })
  revokeRegistrationToken(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("tokenId", () => ID) tokenId: string) {
    return this.s.oidcRegistration.revokeToken(ctx, orgId, tokenId);
  }
}
