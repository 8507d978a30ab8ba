import { Arg, Authorized, Ctx, ID, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { ScimActivity } from "./scim.types.js";

/** SCIM provisioning, as its organization's admins see it (issue 36). */
@Resolver()
export class ScimResolver {
  constructor(private readonly s: Pick<Services, "scimActivity">) {}

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => ScimActivity, { description: "The SCIM base URL and each SCIM key's last request, last write and last error (admins)" })
  scimActivity(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.scimActivity.forOrganization(ctx, orgId);
  }
}
