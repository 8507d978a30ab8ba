import { Field, ID, InputType, ObjectType } from "type-graphql";
import type { GqlInputOf } from "../common/inputs.js";
import type { ViewOf } from "../common/views.js";
import { User } from "../users/users.types.js";

@InputType()
export class RegisterInput implements GqlInputOf<RegisterInput, "accounts", "register"> {
  @Field(() => String) email: string;
  @Field(() => String) password: string;
  @Field(() => String, { nullable: true }) passwordConfirm?: string;
  @Field(() => String, { nullable: true }) fullName?: string;
}

@ObjectType()
export class RegisterPayload implements ViewOf<"accounts", "register"> {
  @Field(() => String) email: string;
  @Field(() => String) message: string;
}

@InputType()
export class LoginInput implements GqlInputOf<LoginInput, "login", "loginWithPassword"> {
  @Field(() => String) email: string;
  @Field(() => String) password: string;
  @Field(() => Boolean, { nullable: true, defaultValue: false }) rememberMe?: boolean;
}

// Assembled by the transport (sessionPayload, login's MFA step) from what the services return; the
// one object type with no view to implement.
@ObjectType({
  description:
    "A sign-in step. Either a session (user, sessionId; the token travels in the HttpOnly cookie only) or, with MFA enrolled, mfaRequired with the methods to finish with",
})
export class AuthPayload {
  @Field(() => User, { nullable: true }) user: User | null;
  @Field(() => Date) expiresAt: Date;
  @Field(() => ID, { nullable: true }) sessionId: string | null;
  @Field(() => Boolean) mfaRequired: boolean;
  @Field(() => [String], { description: "webauthn, totp, backup_code" }) mfaMethods: string[];
}

@InputType()
export class ResetPasswordInput implements GqlInputOf<ResetPasswordInput, "accounts", "resetPassword"> {
  @Field(() => String) token: string;
  @Field(() => String) password: string;
  @Field(() => String, { nullable: true }) passwordConfirm?: string;
}

@ObjectType({ description: "One of the signed-in user's sessions" })
export class Session implements ViewOf<"mySessions", "list"> {
  @Field(() => ID) id: string;
  @Field(() => String, { nullable: true }) ipAddress: string | null;
  @Field(() => String, { nullable: true }) userAgent: string | null;
  @Field(() => Date) createdAt: Date;
  @Field(() => Date) lastActivityAt: Date;
  @Field(() => Date, { description: "When the session ends if it is not used again" }) expiresAt: Date;
  @Field(() => Boolean) rememberMe: boolean;
  @Field(() => Boolean) current: boolean;
}

@InputType()
export class ChangePasswordInput implements GqlInputOf<ChangePasswordInput, "accounts", "changePassword"> {
  @Field(() => String) currentPassword: string;
  @Field(() => String) newPassword: string;
  @Field(() => String, { nullable: true }) newPasswordConfirm?: string;
}

@InputType()
export class ChangeEmailInput implements GqlInputOf<ChangeEmailInput, "accounts", "requestEmailChange"> {
  @Field(() => String) newEmail: string;
  @Field(() => String, { nullable: true, description: "Required when the account has a password" }) password?: string;
}

@ObjectType({ description: "The outcome of signing out" })
export class LogoutPayload {
  @Field(() => String)
  message: string;

  @Field(() => String, { nullable: true, description: "For a session an organization's SAML identity provider issued: where the browser goes to end the IdP session too (the Keyward session has already ended)" })
  idpLogoutUrl: string | null;
}
