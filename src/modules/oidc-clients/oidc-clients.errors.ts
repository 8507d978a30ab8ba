import { AppError, CommonErrors } from "../../lib/errors.js";

export const ClientErrors = {
  notFound: () => new AppError("CLIENT_NOT_FOUND", 404, "Client not found"),
  notConfidential: () => new AppError("BAD_REQUEST", 400, "A public client has no secret to rotate"),
  consentNotFound: () => new AppError("NOT_FOUND", 404, "No consent for that client"),
};

export const RegistrationErrors = {
  tokenNotFound: () => new AppError("REGISTRATION_TOKEN_NOT_FOUND", 404, "Registration token not found"),
  alreadyRevoked: () => new AppError("ALREADY_REVOKED", 409, "The registration token is already revoked"),
  disabled: () =>
    new AppError("DYNAMIC_REGISTRATION_DISABLED", 409, "Dynamic client registration is off on this server: an operator turns it on with OIDC_DYNAMIC_REGISTRATION=true"),
  /** The token a registration presented is unknown, revoked, expired or used up (or lost the race for its last use). */
  tokenNotUsable: () => new AppError("REGISTRATION_TOKEN_INVALID", 401, "The initial access token is invalid, expired, revoked or used up"),
  /** A registration update would switch between public and confidential (its secret would appear or vanish). */
  authMethodFixed: () => CommonErrors.validation([{ path: "tokenEndpointAuthMethod", message: "a client cannot change between public and confidential" }]),
};
