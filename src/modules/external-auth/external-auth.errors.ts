import { AppError } from "../../lib/errors.js";

export const ExternalAuthErrors = {
  unknownProvider: () => new AppError("PROVIDER_NOT_FOUND", 404, "Unknown identity provider: use github or google"),
  notConfigured: (name: string) => new AppError("PROVIDER_NOT_CONFIGURED", 400, `Sign-in with ${name} is not configured or is disabled`),
  redirectUriRefused: () =>
    new AppError("REDIRECT_URI_NOT_ALLOWED", 400, "redirect_uri is not accepted: the callback address is fixed by the server's configuration"),
  invalidState: () =>
    new AppError("OAUTH_STATE_INVALID", 400, "This sign-in link is invalid, has expired, was already used or was started in another browser. Start again."),
  providerError: (name: string, reason: string) => new AppError("OAUTH_ERROR", 502, `${name} did not complete the sign-in: ${reason}`),
  cancelled: (name: string) => new AppError("OAUTH_CANCELLED", 400, `Sign-in with ${name} was cancelled`),
  emailRequired: (name: string) =>
    new AppError("OAUTH_EMAIL_REQUIRED", 400, `${name} did not share an email address: make one visible to this application and try again`),
  accountExists: (name: string) =>
    new AppError(
      "ACCOUNT_EXISTS",
      409,
      `An account with this email address already exists. Sign in to it with your password (or passkey), then link ${name} from your account settings.`,
    ),
  emailUnverified: (name: string) =>
    new AppError(
      "OAUTH_EMAIL_UNVERIFIED",
      403,
      `${name} has not verified this account's email address, so it cannot create a Keyward account. Verify the address at ${name}, or register with a password.`,
    ),
  accountUnavailable: () => new AppError("AUTH_FAILED", 403, "The account linked to this identity is not available"),
  accountSuspended: () => new AppError("ACCOUNT_SUSPENDED", 403, "This account is suspended. Contact your administrator."),
  emailMismatch: (name: string) =>
    new AppError(
      "EMAIL_MISMATCH",
      403,
      `This ${name} account does not list your account's email address as verified, so it cannot be linked. Add and verify that address at ${name}, or sign in to ${name} with the matching account.`,
    ),
  otherUserSignedIn: () =>
    new AppError("OAUTH_STATE_INVALID", 400, "Someone else is signed in in this browser now: sign in as the account that started linking, and start again."),
  identityTaken: (name: string) =>
    new AppError("IDENTITY_ALREADY_LINKED", 409, `This ${name} account is already linked to another Keyward account`),
  providerAlreadyLinked: (name: string) =>
    new AppError("PROVIDER_ALREADY_LINKED", 409, `Your account is already linked to a different ${name} account: unlink it first`),
  ssoRequired: (startUrl: string) =>
    new AppError("SSO_REQUIRED", 403, "Your organization requires single sign-on for this address: sign in through your identity provider", { startUrl }),
  notLinked: (name: string) => new AppError("NOT_LINKED", 404, `No ${name} account is linked`),
  lastSignInMethod: () =>
    new AppError("LAST_SIGN_IN_METHOD", 409, "This is your only way to sign in: set a password or add a passkey before unlinking it"),
  unreadableSecret: (name: string) => new AppError("PROVIDER_NOT_CONFIGURED", 400, `The stored ${name} client secret cannot be read: configure the provider again`),
  // With the field named as the validation details name it, so a form shows it at the secret.
  secretRequired: () =>
    new AppError("VALIDATION_ERROR", 400, "client_secret: required when configuring a provider for the first time", {
      errors: [{ path: "clientSecret", message: "required when configuring a provider for the first time" }],
    }),
};
