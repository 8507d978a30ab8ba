import { AppError } from "../../lib/errors.js";

export const SsoErrors = {
  notFound: () => new AppError("SSO_CONNECTION_NOT_FOUND", 404, "SSO connection not found"),
  // The same answer for an unclaimed domain, a pending claim and a domain without an enabled connection.
  notAvailable: () => new AppError("SSO_NOT_AVAILABLE", 404, "Single sign-on is not available for this address: sign in with your password or passkey"),
  discoveryFailed: (reason: string) => new AppError("SSO_DISCOVERY_FAILED", 400, `The identity provider's discovery document could not be used: ${reason}`),
  metadataInvalid: (reason: string) => new AppError("SSO_METADATA_INVALID", 400, `The identity provider's SAML metadata could not be used: ${reason}`),
  // One answer for every refused SAML response (the code is logged and audited, not shown).
  samlRefused: (reason: string) => new AppError("SSO_SAML_REFUSED", 400, "The identity provider's answer could not be accepted. Start the sign-in again.", { reason }),
  // OpenID Connect Back-Channel Logout: every refusal is a 400 (the reason is logged and audited).
  logoutTokenInvalid: (reason: string) => new AppError("SSO_LOGOUT_TOKEN_INVALID", 400, "The logout token could not be accepted", { reason }),
  samlReplay: () => new AppError("SSO_SAML_REPLAY", 400, "This sign-in answer was already used. Start the sign-in again."),
  invalidState: () =>
    new AppError("OAUTH_STATE_INVALID", 400, "This sign-in link is invalid, has expired, was already used or was started in another browser. Start again."),
  providerError: (reason: string) => new AppError("OAUTH_ERROR", 502, `The identity provider did not complete the sign-in: ${reason}`),
  cancelled: () => new AppError("OAUTH_CANCELLED", 400, "The sign-in was cancelled at the identity provider"),
  emailRequired: () => new AppError("OAUTH_EMAIL_REQUIRED", 400, "The identity provider did not send an email address for this person"),
  emailNotAllowed: () =>
    new AppError(
      "SSO_EMAIL_NOT_ALLOWED",
      403,
      "The identity provider sent an address outside the organization's verified domains, so no account can be created for it. Ask your administrator.",
    ),
  linkRequired: () =>
    new AppError(
      "SSO_LINK_REQUIRED",
      409,
      "An account with this email address already exists. Sign in with your current method, then link single sign-on from your account settings.",
    ),
  accountSuspended: () => new AppError("ACCOUNT_SUSPENDED", 403, "This account is suspended. Contact your administrator."),
  accountUnavailable: () => new AppError("AUTH_FAILED", 403, "The account linked to this identity is not available"),
  emailMismatch: () => new AppError("EMAIL_MISMATCH", 403, "The identity provider's address for you is not your account's address, so it cannot be linked"),
  identityTaken: () => new AppError("IDENTITY_ALREADY_LINKED", 409, "This identity is already linked to another account"),
  otherUserSignedIn: () =>
    new AppError("OAUTH_STATE_INVALID", 400, "Someone else is signed in in this browser now: sign in as the account that started linking, and start again."),
  required: (startUrl: string) =>
    new AppError("SSO_REQUIRED", 403, "Your organization requires single sign-on for this address: sign in through your identity provider", { startUrl }),
  identityNotFound: () => new AppError("SSO_IDENTITY_NOT_FOUND", 404, "No such single sign-on identity is linked to your account"),
  unlinkManaged: () =>
    new AppError("SSO_UNLINK_MANAGED", 409, "Your account was created by your organization's single sign-on and is managed by it, so this identity cannot be unlinked"),
  unlinkRequired: () =>
    new AppError("SSO_UNLINK_REQUIRED", 409, "Your organization requires single sign-on for your address: unlinking this identity would lock you out"),
  lastSignInMethod: () =>
    new AppError("LAST_SIGN_IN_METHOD", 409, "This is your only way to sign in: set a password or add a passkey before unlinking it"),
  secretRequired: () =>
    new AppError("VALIDATION_ERROR", 400, "clientSecret: required for this authentication method", { errors: [{ path: "clientSecret", message: "required for this authentication method" }] }),
};
