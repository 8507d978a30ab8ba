import type { Response } from "express";
import { GraphQLJSON, GraphQLJSONObject } from "graphql-scalars";
import { Arg, Authorized, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from "type-graphql";
import type { Config } from "../../config/index.js";
import type { Services } from "../../container.js";
import { clearMfaCookie, mfaTokenOf, setSessionCookie } from "../../http/session.js";
import type { SessionIssued } from "../../modules/auth/session-issuer.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { AuthPayload } from "../types/auth.types.js";
import { message, MessagePayload } from "../types/common.types.js";
import { OrgRole } from "../types/org.types.js";

/** A finished sign-in in GraphQL: the session goes into the HttpOnly cookie, never the body. */
export function sessionPayload(res: Response, config: Config, result: SessionIssued): AuthPayload {
  setSessionCookie(res, config, result.token, result.persistent ? result.expiresAt : null);
  clearMfaCookie(res, config);
  return { user: result.user as AuthPayload["user"], expiresAt: result.expiresAt, sessionId: result.sessionId, mfaRequired: false, mfaMethods: [] };
}

@ObjectType()
class WebauthnOptions {
  @Field(() => String, { description: "Send it back with the response" }) challengeId: string;
  @Field(() => GraphQLJSONObject, { description: "PublicKeyCredentialCreation/RequestOptionsJSON" }) options: Record<string, unknown>;
}

@ObjectType()
class WebauthnCredential {
  @Field(() => ID) id: string;
  @Field(() => String) name: string;
  @Field(() => [String]) transports: string[];
  @Field(() => String) deviceType: string;
  @Field(() => Boolean) backedUp: boolean;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date, { nullable: true }) lastUsedAt: Date | null;
}

@ObjectType()
class RegisteredCredential {
  @Field(() => WebauthnCredential) credential: WebauthnCredential;
  @Field(() => [String], { nullable: true, description: "With the first MFA method only: shown this once" }) backupCodes: string[] | null;
}

@ObjectType()
class MfaStatus {
  @Field(() => Boolean) mfaEnabled: boolean;
  @Field(() => Boolean) webauthnEnabled: boolean;
  @Field(() => Int) credentialCount: number;
  @Field(() => Boolean) totpEnabled: boolean;
  @Field(() => Int) backupCodesRemaining: number;
}

@ObjectType()
class TotpEnrollment {
  @Field(() => String) secret: string;
  @Field(() => String) provisioningUri: string;
  @Field(() => String, { description: "data:image/png;base64 QR code of the URI" }) qrCode: string;
}

@ObjectType()
class BackupCodes {
  @Field(() => [String], { nullable: true }) backupCodes: string[] | null;
}

@ObjectType()
class SecurityPolicy {
  @Field(() => ID) organizationId: string;
  @Field(() => String) mfaPolicyMode: string;
  @Field(() => Int) mfaGracePeriodDays: number;
  @Field(() => Int) notifyDaysBefore: number;
  @Field(() => Int) policyVersion: number;
}

@InputType()
class SecurityPolicyInput {
  @Field(() => String, { description: "disabled | optional | required" }) mfaPolicyMode: string;
  @Field(() => Int, { nullable: true }) mfaGracePeriodDays?: number;
  @Field(() => Int, { nullable: true }) notifyDaysBefore?: number;
}

@ObjectType()
class MemberCompliance {
  @Field(() => ID) userId: string;
  @Field(() => String) userEmail: string;
  @Field(() => String, { nullable: true }) userName: string | null;
  @Field(() => String) status: string;
  @Field(() => Date, { nullable: true }) deadlineAt: Date | null;
  @Field(() => Date, { nullable: true }) compliantAt: Date | null;
  @Field(() => Date, { nullable: true }) lastNotifiedAt: Date | null;
}

@ObjectType()
class MyCompliance {
  @Field(() => ID) organizationId: string;
  @Field(() => String) organizationName: string;
  @Field(() => String) status: string;
  @Field(() => Date, { nullable: true }) deadlineAt: Date | null;
}

@ObjectType()
class ReminderResult {
  @Field(() => Boolean) sent: boolean;
}

@ObjectType()
class UserMfaMethods {
  @Field(() => [WebauthnCredential]) webauthn: WebauthnCredential[];
  @Field(() => Boolean) totpEnabled: boolean;
  @Field(() => Int) backupCodesRemaining: number;
}

const token = (ctx: GqlContext, given?: string | null) => given ?? mfaTokenOf(ctx.req, ctx.config);

@Resolver()
export class MfaResolver {
  constructor(private readonly s: Services) {}

  @Mutation(() => AuthPayload, { description: "Second factor: a TOTP or backup code (mfaToken defaults to the browser's cookie)" })
  async completeMfaWithCode(
    @Ctx() c: GqlContext,
    @Arg("code", () => String) code: string,
    @Arg("isBackupCode", () => Boolean, { nullable: true }) isBackupCode?: boolean,
    @Arg("mfaToken", () => String, { nullable: true }) mfaToken?: string,
  ) {
    return sessionPayload(c.res, c.config, await this.s.mfaLogin.completeWithCode(c.ctx, { code, isBackupCode: isBackupCode ?? undefined, mfaToken: token(c, mfaToken) }));
  }

  @Mutation(() => WebauthnOptions)
  beginWebauthnMfa(@Ctx() c: GqlContext, @Arg("mfaToken", () => String, { nullable: true }) mfaToken?: string) {
    return this.s.mfaLogin.beginWebauthn(c.ctx, { mfaToken: token(c, mfaToken) });
  }

  @Mutation(() => AuthPayload)
  async completeWebauthnMfa(
    @Ctx() c: GqlContext,
    @Arg("challengeId", () => String) challengeId: string,
    @Arg("response", () => GraphQLJSON) response: unknown,
    @Arg("mfaToken", () => String, { nullable: true }) mfaToken?: string,
  ) {
    return sessionPayload(c.res, c.config, await this.s.mfaLogin.completeWebauthn(c.ctx, { challengeId, response, mfaToken: token(c, mfaToken) }));
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
    return sessionPayload(c.res, c.config, await this.s.mfaLogin.completePasskey(c.ctx, { challengeId, response, rememberMe: rememberMe ?? undefined }));
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
    return this.s.mfa.completeWebauthnRegistration(ctx, { challengeId, response, name: name ?? undefined });
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
    await this.s.mfa.disableTotp(ctx, { password: password ?? undefined });
    return message("Authenticator app removed");
  }

  @Authorized()
  @Mutation(() => BackupCodes)
  regenerateBackupCodes(@Ctx() { ctx }: GqlContext, @Arg("password", () => String, { nullable: true }) password?: string) {
    return this.s.mfa.regenerateBackupCodes(ctx, { password: password ?? undefined });
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
    return this.s.mfaPolicy.putPolicy(ctx, orgId, Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined)));
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

  @Authorized()
  @Query(() => UserMfaMethods, { description: "An administered user's MFA methods (no secrets)" })
  userMfaMethods(@Ctx() { ctx }: GqlContext, @Arg("userId", () => ID) userId: string) {
    return this.s.adminUsers.mfaMethods(ctx, userId);
  }

  @Authorized()
  @Mutation(() => MessagePayload, { description: "Remove an administered user's MFA: one credential, totp, webauthn or all" })
  async removeUserMfa(
    @Ctx() { ctx }: GqlContext,
    @Arg("userId", () => ID) userId: string,
    @Arg("method", () => String) method: string,
    @Arg("credentialId", () => ID, { nullable: true }) credentialId?: string,
  ) {
    await this.s.adminUsers.removeMfa(ctx, userId, { method, credentialId: credentialId ?? undefined });
    return message("MFA removed");
  }
}
