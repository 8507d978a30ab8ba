import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { OrganizationDomain } from "./domains.types.js";

@Resolver()
export class DomainsResolver {
  constructor(private readonly s: Pick<Services, "domains">) {}

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [OrganizationDomain], { description: "The organization's domains, each with its status and TXT record" })
  organizationDomains(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.domains.list(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => OrganizationDomain, { description: "Claims a domain; the answer names the TXT record that proves it" })
  addOrganizationDomain(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("domain", () => String) domain: string) {
    return this.s.domains.add(ctx, orgId, { domain });
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => OrganizationDomain, { description: "Looks the TXT record up now: verified when found, otherwise unchanged with the reason in lastCheckError" })
  verifyOrganizationDomain(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("domainId", () => ID) domainId: string) {
    return this.s.domains.verify(ctx, orgId, domainId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => OrganizationDomain)
  removeOrganizationDomain(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("domainId", () => ID) domainId: string) {
    return this.s.domains.remove(ctx, orgId, domainId);
  }
}
