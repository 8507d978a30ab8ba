import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { clearSessionCookie, setMfaCookie } from "../../http/session.js";
import { message, MessagePayload } from "../common/common.types.js";
import type { GqlContext } from "../context.js";
import { User } from "../users/users.types.js";
import { AuthPayload, LogoutPayload, ChangeEmailInput, ChangePasswordInput, LoginInput, RegisterInput, RegisterPayload, ResetPasswordInput, Session } from "./auth.types.js";
import { sessionPayload } from "./session-payload.js";

/** Accounts, password sign-in and the signed-in user's sessions. */
@Resolver()
export class AuthResolver {
  constructor(private readonly s: Pick<Services, "accounts" | "login" | "mySessions" | "ssoLogout">) {}

  @Mutation(() => RegisterPayload, { description: "Create an account; the same answer for an address that already has one" })
  register(@Ctx() { ctx }: GqlContext, @Arg("input", () => RegisterInput) input: RegisterInput) {
    return this.s.accounts.register(ctx, input);
  }

  @Mutation(() => AuthPayload, { description: "Sign in with a password; the session arrives as an HttpOnly cookie" })
  async login(@Ctx() { ctx, res, config }: GqlContext, @Arg("input", () => LoginInput) input: LoginInput) {
    const result = await this.s.login.loginWithPassword(ctx, input);
    if (result.kind === "mfa") {
      // The pending second factor is bound to this browser through an HttpOnly cookie.
      setMfaCookie(res, config, result.mfaToken, result.expiresAt);
      return { user: null, sessionId: null, expiresAt: result.expiresAt, mfaRequired: true, mfaMethods: result.methods };
    }
    return sessionPayload(res, config, result);
  }

  @Authorized()
  @Mutation(() => LogoutPayload, { description: "End this session; idpLogoutUrl, when set, is where the browser goes to sign out at the organization's identity provider too" })
  async logout(@Ctx() { ctx, res, config }: GqlContext) {
    const signedOut = await this.s.ssoLogout.signOut(ctx);
    clearSessionCookie(res, config);
    return { ...message("Logout successful"), ...signedOut };
  }

  @Mutation(() => User)
  verifyEmail(@Ctx() { ctx }: GqlContext, @Arg("token", () => String) token: string) {
    return this.s.accounts.verifyEmail(ctx, { token });
  }

  @Authorized()
  @Mutation(() => MessagePayload, { description: "Email a new verification link (rate limited)" })
  resendVerification(@Ctx() { ctx }: GqlContext) {
    return this.s.accounts.resendVerificationForMe(ctx);
  }

  @Mutation(() => MessagePayload, { description: "Email a new verification link to an address; the same answer for every address" })
  resendVerificationEmail(@Ctx() { ctx }: GqlContext, @Arg("email", () => String) email: string) {
    return this.s.accounts.resendVerificationByEmail(ctx, { email });
  }

  @Mutation(() => MessagePayload, { description: "Email a reset link; the same answer for every address" })
  forgotPassword(@Ctx() { ctx }: GqlContext, @Arg("email", () => String) email: string) {
    return this.s.accounts.forgotPassword(ctx, { email });
  }

  @Mutation(() => MessagePayload)
  resetPassword(@Ctx() { ctx }: GqlContext, @Arg("input", () => ResetPasswordInput) input: ResetPasswordInput) {
    return this.s.accounts.resetPassword(ctx, input);
  }

  @Mutation(() => MessagePayload, { description: "Email a new activation link; the same answer for every address" })
  resendActivation(@Ctx() { ctx }: GqlContext, @Arg("email", () => String) email: string) {
    return this.s.accounts.resendActivation(ctx, { email });
  }

  @Authorized()
  @Mutation(() => MessagePayload)
  changePassword(@Ctx() { ctx }: GqlContext, @Arg("input", () => ChangePasswordInput) input: ChangePasswordInput) {
    return this.s.accounts.changePassword(ctx, input);
  }

  @Authorized()
  @Mutation(() => MessagePayload, { description: "Change your email address: a link goes to the new one, and the address changes when it is opened" })
  requestEmailChange(@Ctx() { ctx }: GqlContext, @Arg("input", () => ChangeEmailInput) input: ChangeEmailInput) {
    return this.s.accounts.requestEmailChange(ctx, input);
  }

  @Authorized()
  @Query(() => [Session])
  mySessions(@Ctx() { ctx }: GqlContext) {
    return this.s.mySessions.list(ctx);
  }

  @Authorized()
  @Mutation(() => MessagePayload)
  async revokeSession(@Ctx() { ctx }: GqlContext, @Arg("id", () => ID) id: string) {
    await this.s.mySessions.revoke(ctx, id);
    return message("Session revoked");
  }

  @Authorized()
  @Mutation(() => Int, { description: "Sign out your other sessions; the number signed out" })
  async revokeOtherSessions(@Ctx() { ctx }: GqlContext) {
    return (await this.s.mySessions.revokeOthers(ctx)).revoked;
  }
}
