import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { loose } from "../common/inputs.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { OffboardInput, OffboardingReceipt, OffboardingReceiptPage, Reinstatement } from "./offboarding.types.js";

/** Offboarding as one action, and its receipts. */
@Resolver()
export class OffboardingResolver {
  constructor(private readonly s: Pick<Services, "offboarding">) {}

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => OffboardingReceipt, { description: "Offboard a member in one step (suspend or remove); answers the receipt" })
  offboardMember(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("userId", () => ID) userId: string, @Arg("input", () => OffboardInput) input: OffboardInput) {
    return this.s.offboarding.offboard(ctx, orgId, userId, loose({ mode: input.mode, reason: input.reason }));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => Reinstatement, { description: "Lift a suspension: the membership comes back (revoked credentials stay revoked)" })
  reinstateMember(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("userId", () => ID) userId: string) {
    return this.s.offboarding.reinstate(ctx, orgId, userId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => OffboardingReceipt, { description: "One offboarding receipt, by its id or its audit record's id" })
  offboardingReceipt(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("id", () => ID) id: string) {
    return this.s.offboarding.receipt(ctx, orgId, id);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => OffboardingReceiptPage, { description: "The organization's offboarding receipts, newest first" })
  offboardingReceipts(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("userId", () => ID, { nullable: true }) userId?: string | null,
    @Arg("page", () => Int, { nullable: true }) page?: number | null,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number | null,
  ) {
    return this.s.offboarding.receipts(ctx, orgId, { userId: omitNulls(userId), page: omitNulls(page), perPage: omitNulls(perPage) });
  }
}
