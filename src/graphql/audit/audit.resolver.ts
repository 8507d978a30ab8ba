import { Arg, Args, Authorized, Ctx, ID, Int, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { ActivityPage, AuditLogPage, SystemAuditLogArgs } from "./audit.types.js";

/** Audit records read by capability: an organization's activity (a user's own log is in users/, an account's in admin/). */
@Resolver()
export class AuditResolver {
  constructor(private readonly s: Pick<Services, "activity">) {}

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => ActivityPage, { description: "The organization's audit records, newest first" })
  organizationActivity(
    @Ctx() { ctx }: GqlContext,
    @Arg("orgId", () => ID) orgId: string,
    @Arg("userId", () => ID, { nullable: true }) userId?: string,
    @Arg("action", () => String, { nullable: true }) action?: string,
    @Arg("limit", () => Int, { nullable: true }) limit?: number,
    @Arg("cursor", () => String, { nullable: true }) cursor?: string,
    @Arg("since", () => Date, { nullable: true, description: "Records from this instant on" }) since?: Date,
    @Arg("until", () => Date, { nullable: true, description: "Records before this instant" }) until?: Date,
  ) {
    return this.s.activity.list(ctx, orgId, omitNulls({ userId, action, limit, cursor, since, until }));
  }

  @Authorized()
  @Query(() => AuditLogPage, { description: "The system audit log, newest first: every record for a superadmin, your own for anyone else" })
  systemAuditLog(@Ctx() { ctx }: GqlContext, @Args(() => SystemAuditLogArgs) args: SystemAuditLogArgs) {
    return this.s.activity.systemLog(ctx, omitNulls(args));
  }
}
