import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { SUPERADMIN } from "../auth-checker.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { AuditChainCheck, AuditVerification } from "./audit-chain.types.js";

/** The tamper-evident audit chain (exports are files: REST only). */
@Resolver()
export class AuditChainResolver {
  constructor(private readonly s: Pick<Services, "auditVerify">) {}

  @Authorized(SUPERADMIN)
  @Query(() => AuditVerification, { description: "Verify the audit hash chains and their signed heads and checkpoints (superadmins)" })
  auditChainVerification(@Ctx() { ctx }: GqlContext) {
    return this.s.auditVerify.verify(ctx);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => AuditChainCheck, { nullable: true, description: "The organization's audit chain as last verified (null: never)" })
  organizationAuditChainCheck(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.auditVerify.organizationCheck(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => AuditChainCheck, { description: "Verify the organization's audit chain from its signed checkpoint to its signed head, and keep the outcome" })
  verifyOrganizationAuditChain(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.auditVerify.verifyOrganization(ctx, orgId);
  }
}
