import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { SUPERADMIN } from "../auth-checker.js";
import { omitNulls } from "../common/nulls.js";
import type { GqlContext } from "../context.js";
import { AdminLookup, AdminOrganizationPage, GlobalKillSwitch, GlobalKillSwitchInput, GlobalKillSwitchPage, GlobalKillSwitchPayload, GlobalKillSwitchPreview } from "./operators.types.js";

/** What only Keyward's operators (superadmins) see and do: every organization, names by id, the global kill switch. */
@Resolver()
export class OperatorsResolver {
  constructor(private readonly s: Pick<Services, "allOrganizations" | "operators" | "globalKillSwitch">) {}

  @Authorized(SUPERADMIN)
  @Query(() => AdminOrganizationPage, { description: "Every organization with its member count and owners (superadmins)" })
  adminOrganizations(
    @Ctx() { ctx }: GqlContext,
    @Arg("q", () => String, { nullable: true, description: "A case-insensitive part of the name or slug" }) q?: string,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    return this.s.allOrganizations.list(ctx, omitNulls({ q, page, perPage }));
  }

  @Authorized(SUPERADMIN)
  @Query(() => AdminLookup, { description: "Names of accounts and organizations by id, deleted accounts included (superadmins; at most 200 of each)" })
  adminLookup(
    @Ctx() { ctx }: GqlContext,
    @Arg("userIds", () => [ID], { nullable: true }) userIds?: string[],
    @Arg("organizationIds", () => [ID], { nullable: true }) organizationIds?: string[],
  ) {
    return this.s.operators.lookup(ctx, omitNulls({ userIds, organizationIds }));
  }

  @Authorized(SUPERADMIN)
  @Query(() => GlobalKillSwitchPage, { description: "Global kill switches, newest first (superadmins)" })
  globalKillSwitches(
    @Ctx() { ctx }: GqlContext,
    @Arg("inForce", () => Boolean, { nullable: true, description: "true: only those in force; false: only lifted ones" }) inForce?: boolean,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true }) perPage?: number,
  ) {
    return this.s.globalKillSwitch.list(ctx, omitNulls({ inForce, page, perPage }));
  }

  @Authorized(SUPERADMIN)
  @Query(() => GlobalKillSwitchPreview, { description: "What a global kill switch on this person would cut (superadmins)" })
  globalKillSwitchPreview(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string) {
    return this.s.globalKillSwitch.preview(ctx, userId);
  }

  @Authorized(SUPERADMIN)
  @Mutation(() => GlobalKillSwitchPayload, { description: "Cut a person off every network of every organization until an operator lifts it (superadmins)" })
  triggerGlobalKillSwitch(@Ctx() { ctx }: GqlContext, @Arg("input", () => GlobalKillSwitchInput) input: GlobalKillSwitchInput) {
    return this.s.globalKillSwitch.trigger(ctx, omitNulls(input));
  }

  @Authorized(SUPERADMIN)
  @Mutation(() => GlobalKillSwitch, { description: "Lift a global kill switch: access comes back as approved (superadmins)" })
  liftGlobalKillSwitch(@Ctx() { ctx }: GqlContext, @Arg("eventId", () => ID) eventId: string) {
    return this.s.globalKillSwitch.lift(ctx, eventId);
  }
}
