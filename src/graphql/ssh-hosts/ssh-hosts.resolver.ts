import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { loose } from "../common/inputs.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { CreatedHostEnrollmentToken, HostEnrollmentToken, HostEnrollmentTokenInput, SshHost, SshHostPrincipals, SshHostPrincipalsInput } from "./ssh-hosts.types.js";

/** Enrolled servers and their one-time enrollment tokens (enrollment and renewal are the host's own REST calls). */
@Resolver()
export class SshHostsResolver {
  constructor(private readonly s: Pick<Services, "hostEnrollment" | "hostRenewal" | "hostPrincipals">) {}

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [SshHost])
  sshHosts(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("includeRetired", () => Boolean, { nullable: true }) includeRetired?: boolean) {
    return this.s.hostRenewal.list(ctx, orgId, { includeRetired: includeRetired ?? false });
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => SshHost, { description: "Retire a host: it can no longer renew, its host certificates are revoked (KRL)" })
  retireSshHost(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("hostId", () => ID) hostId: string, @Arg("reason", () => String, { nullable: true }) reason?: string) {
    return this.s.hostRenewal.retire(ctx, orgId, hostId, omitNulls({ reason }));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [HostEnrollmentToken])
  hostEnrollmentTokens(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.hostEnrollment.listTokens(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => CreatedHostEnrollmentToken, { description: "The secret is in the answer, once" })
  createHostEnrollmentToken(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => HostEnrollmentTokenInput) input: HostEnrollmentTokenInput) {
    return this.s.hostEnrollment.createToken(ctx, orgId, loose(omitNulls({ ...input })));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => HostEnrollmentToken)
  revokeHostEnrollmentToken(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("tokenId", () => ID) tokenId: string) {
    return this.s.hostEnrollment.revokeToken(ctx, orgId, tokenId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [SshHostPrincipals], { description: "Per-host principals (AuthorizedPrincipalsFile), by host pattern and login" })
  sshHostPrincipals(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.hostPrincipals.list(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => SshHostPrincipals, { description: "Set the principals that may log in as a login on the hosts a pattern matches (created or replaced)" })
  setSshHostPrincipals(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => SshHostPrincipalsInput) input: SshHostPrincipalsInput) {
    return this.s.hostPrincipals.set(ctx, orgId, loose({ ...input }));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => SshHostPrincipals)
  removeSshHostPrincipals(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("mapId", () => ID) mapId: string) {
    return this.s.hostPrincipals.remove(ctx, orgId, mapId);
  }
}
