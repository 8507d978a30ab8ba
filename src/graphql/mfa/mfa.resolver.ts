import { GraphQLJSON } from "graphql-scalars";
import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { mfaTokenOf } from "../../http/session.js";
import { AuthPayload } from "../auth/auth.types.js";
import { sessionPayload } from "../auth/session-payload.js";
import { loose } from "../common/inputs.js";
import { message, MessagePayload } from "../common/common.types.js";
import { omitNulls } from "../common/nulls.js";
import { OrgRole } from "../common/org-role.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { BackupCodes, MemberCompliance, MfaStatus, MyCompliance, RegisteredCredential, ReminderResult, SecurityPolicy, SecurityPolicyInput, TotpEnrollment, WebauthnCredential, WebauthnOptions } from "./mfa.types.js";

/** The pending sign-in: the token the client names, else the one in this browser's HttpOnly cookie. */
const token = (ctx: GqlContext, given?: string | null) => given ?? mfaTokenOf(ctx.req, ctx.config);

/** Second factors: signing in with them, enrolling them, and an organization's MFA policy. */
@Resolver()
export class MfaResolver {
  constructor(private readonly s: Pick<Services, "mfa" | "mfaLogin" | "mfaPolicy">) {}

  @Mutation(() => AuthPayload, { description: "Second factor: a TOTP or backup code (mfaToken defaults to the browser's cookie)" })
  async completeMfaWithCode(
    @Ctx() c: GqlContext,
    @Arg("code", () => String) code: string,
    @Arg("isBackupCode", () => Boolean, { nullable: true }) isBackupCode?: boolean,
    @Arg("mfaToken", () => String, { nullable: true }) mfaToken?: string,
  ) {
    return sessionPayload(c.res, c.config, await this.s.mfaLogin.completeWithCode(c.ctx, loose(omitNulls({ code, isBackupCode, mfaToken: token(c, mfaToken) }))));
  }

  @Mutation(() => WebauthnOptions)
  beginWebauthnMfa(@Ctx() c: GqlContext, @Arg("mfaToken", () => String, { nullable: true }) mfaToken?: string) {
    return this.s.mfaLogin.beginWebauthn(c.ctx, loose({ mfaToken: token(c, mfaToken) }));
  }

  @Mutation(() => AuthPayload)
  async completeWebauthnMfa(
    @Ctx() c: GqlContext,
    @Arg("challengeId", () => String) challengeId: string,
    @Arg("response", () => GraphQLJSON) response: unknown,
    @Arg("mfaToken", () => String, { nullable: true }) mfaToken?: string,
  ) {
    return sessionPayload(c.res, c.config, await this.s.mfaLogin.completeWebauthn(c.ctx, loose({ challengeId, response, mfaToken: token(c, mfaToken) })));
  }

  @Mutation(() => WebauthnOptions, { description: "Passkey sign-in (usernameless)" })
  beginPasskeyLogin(@Ctx() c: GqlContext) {
    return this.s.mfaLogin.beginPasskey(c.ctx);
  }

  @Mutation(() => AuthPayload)
  async completePasskeyLogin(
    @Ctx() c: GqlContext,
    @Arg("challengeId", () => String) challengeId: string,
    @Arg("response", () => GraphQLJSON) response: unknown,
    @Arg("rememberMe", () => Boolean, { nullable: true }) rememberMe?: boolean,
  ) {
    return sessionPayload(c.res, c.config, await this.s.mfaLogin.completePasskey(c.ctx, loose(omitNulls({ challengeId, response, rememberMe }))));
  }

  @Authorized()
  @Mutation(() => WebauthnOptions)
  beginWebauthnRegistration(@Ctx() { ctx }: GqlContext) {
    return this.s.mfa.beginWebauthnRegistration(ctx);
  }

  @Authorized()
  @Mutation(() => RegisteredCredential)
  completeWebauthnRegistration(
    @Ctx() { ctx }: GqlContext,
    @Arg("challengeId", () => String) challengeId: string,
    @Arg("response", () => GraphQLJSON) response: unknown,
    @Arg("name", () => String, { nullable: true }) name?: string,
  ) {
    return this.s.mfa.completeWebauthnRegistration(ctx, loose(omitNulls({ challengeId, response, name })));
  }

  @Authorized()
  @Query(() => [WebauthnCredential])
  myWebauthnCredentials(@Ctx() { ctx }: GqlContext) {
    return this.s.mfa.listCredentials(ctx);
  }

  @Authorized()
  @Mutation(() => WebauthnCredential)
  renameWebauthnCredential(@Ctx() { ctx }: GqlContext, @Arg("id", () => ID) id: string, @Arg("name", () => String) name: string) {
    return this.s.mfa.renameCredential(ctx, id, { name });
  }

  @Authorized()
  @Mutation(() => MessagePayload)
  async deleteWebauthnCredential(@Ctx() { ctx }: GqlContext, @Arg("id", () => ID) id: string) {
    await this.s.mfa.deleteCredential(ctx, id);
    return message("Credential removed");
  }

  @Authorized()
  @Query(() => MfaStatus)
  mfaStatus(@Ctx() { ctx }: GqlContext) {
    return this.s.mfa.status(ctx);
  }

  @Authorized()
  @Mutation(() => TotpEnrollment)
  enrollTotp(@Ctx() { ctx }: GqlContext) {
    return this.s.mfa.enrollTotp(ctx);
  }

  @Authorized()
  @Mutation(() => BackupCodes, { description: "Confirms TOTP; the first MFA method returns backup codes" })
  verifyTotpEnrollment(@Ctx() { ctx }: GqlContext, @Arg("code", () => String) code: string) {
    return this.s.mfa.verifyTotpEnrollment(ctx, { code });
  }

  @Authorized()
  @Mutation(() => MessagePayload)
  async disableTotp(@Ctx() { ctx }: GqlContext, @Arg("password", () => String, { nullable: true }) password?: string) {
    await this.s.mfa.disableTotp(ctx, omitNulls({ password }));
    return message("Authenticator app removed");
  }

  @Authorized()
  @Mutation(() => BackupCodes)
  regenerateBackupCodes(@Ctx() { ctx }: GqlContext, @Arg("password", () => String, { nullable: true }) password?: string) {
    return this.s.mfa.regenerateBackupCodes(ctx, omitNulls({ password }));
  }

  @Authorized()
  @Query(() => [MyCompliance])
  myMfaCompliance(@Ctx() { ctx }: GqlContext) {
    return this.s.mfaPolicy.myCompliance(ctx);
  }

  @Authorized()
  @org(OrgRole.guest)
  @Query(() => SecurityPolicy)
  orgSecurityPolicy(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.mfaPolicy.getPolicy(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => SecurityPolicy)
  updateOrgSecurityPolicy(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => SecurityPolicyInput) input: SecurityPolicyInput) {
    return this.s.mfaPolicy.putPolicy(ctx, orgId, loose(omitNulls(input)));
  }

  @Authorized()
  @org(OrgRole.admin)
  @Query(() => [MemberCompliance])
  orgMfaCompliance(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
    return this.s.mfaPolicy.compliance(ctx, orgId);
  }

  @Authorized()
  @org(OrgRole.admin)
  @Mutation(() => ReminderResult)
  sendMfaReminder(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("userId", () => ID) userId: string) {
    return this.s.mfaPolicy.sendReminder(ctx, orgId, userId);
  }
}
