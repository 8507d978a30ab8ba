import { AppError, CommonErrors } from "../../lib/errors.js";

export const AuthErrors = {
  // One message for unknown email and wrong password: the answer must not reveal which.
  invalidCredentials: () => new AppError("AUTHENTICATION_ERROR", 401, "Invalid email or password"),
  ssoRequired: (startUrl: string) =>
    new AppError("SSO_REQUIRED", 403, "Your organization requires single sign-on for this address: sign in through your identity provider", { startUrl }),
  accountSuspended: () =>
    new AppError("ACCOUNT_SUSPENDED", 403, "This account is suspended. Contact your administrator."),
  invalidLink: () =>
    new AppError("INVALID_LINK", 400, "This link is invalid, has expired or was already used. Request a new one."),
  emailAlreadyVerified: () => new AppError("EMAIL_ALREADY_VERIFIED", 409, "Your email address is already verified"),
  currentPasswordIncorrect: () => new AppError("CURRENT_PASSWORD_INCORRECT", 400, "The current password is incorrect"),
  passwordRequired: () => new AppError("PASSWORD_REQUIRED", 400, "Confirm with your current password"),
  recentSignInRequired: () =>
    new AppError("RECENT_SIGN_IN_REQUIRED", 403, "Sign in again to confirm it is you (this account has no password), then retry within 10 minutes"),
  sameEmail: () => CommonErrors.validation([{ path: "newEmail", message: "is already your email address" }]),
  emailTaken: () => new AppError("EMAIL_TAKEN", 409, "This address now belongs to another account: the email change was not made"),
  sessionNotFound: () => new AppError("SESSION_NOT_FOUND", 404, "Session not found"),
  invalidRedirect: () =>
    new AppError("INVALID_REDIRECT", 400, "The redirect URL is not allowed: its origin is not in CORS_ORIGINS"),
};
