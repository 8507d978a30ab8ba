import { Authorized, Ctx, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { SUPERADMIN } from "../auth-checker.js";
import type { GqlContext } from "../context.js";
import { AuditVerification } from "./audit-chain.types.js";

/** The tamper-evident audit chain (exports are files: REST only). */
@Resolver()
export class AuditChainResolver {
  constructor(private readonly s: Pick<Services, "auditVerify">) {}

  @Authorized(SUPERADMIN)
  @Query(() => AuditVerification, { description: "Verify the audit hash chains and their signed heads and checkpoints (superadmins)" })
  auditChainVerification(@Ctx() { ctx }: GqlContext) {
    return this.s.auditVerify.verify(ctx);
  }
}
