import { AppError, CommonErrors } from "../../lib/errors.js";

export const HostErrors = {
  tokenNotFound: () => new AppError("ENROLLMENT_TOKEN_NOT_FOUND", 404, "Enrollment token not found"),
  tokenInvalid: () => new AppError("ENROLLMENT_TOKEN_INVALID", 401, "This enrollment token is not valid: ask an organization admin for a new one"),
  tokenExpired: () => new AppError("ENROLLMENT_TOKEN_EXPIRED", 410, "This enrollment token has expired: ask an organization admin for a new one"),
  tokenRevoked: () => new AppError("ENROLLMENT_TOKEN_REVOKED", 410, "This enrollment token was revoked: ask an organization admin for a new one"),
  tokenCreatorGone: () =>
    new AppError("ENROLLMENT_TOKEN_CREATOR_GONE", 410, "This enrollment token was revoked: the admin who created it no longer administers the organization; ask a current admin for a new one"),
  tokenUsed: () => new AppError("ENROLLMENT_TOKEN_USED", 409, "This enrollment token has already been used (each one enrolls one host once): ask an organization admin for a new one"),
  tokenForeign: () =>
    new AppError("ENROLLMENT_TOKEN_FOREIGN", 403, "This enrollment token belongs to another organization than the one this host is enrolled in: use a token of the host's organization, or retire the host there first"),
  tokenClosed: () => new AppError("ENROLLMENT_TOKEN_CLOSED", 409, "The enrollment token has already been used or revoked"),
  nameNotAllowed: (names: string[]) =>
    new AppError("HOST_NAME_NOT_ALLOWED", 403, `The enrollment token does not allow these names: ${names.join(", ")}`, { names }),
  patternNotAllowed: (patterns: string[]) =>
    CommonErrors.validation([
      {
        path: "names",
        message: `${patterns.join(", ")}: a pattern (OpenSSH would accept the host certificate for every name it matches); name each host, or let the operator allow patterns (SSH_HOST_PRINCIPAL_PATTERNS=true)`,
      },
    ]),
  duplicateKeys: () => CommonErrors.validation([{ path: "hostKeys", message: "the same host key is listed twice" }]),
  notHostKey: (type: string) =>
    new AppError("WRONG_KEY_MATERIAL", 400, `${type}: not a host public key (send the lines of /etc/ssh/ssh_host_*_key.pub)`),
  principalMapNotFound: () => new AppError("HOST_PRINCIPAL_MAP_NOT_FOUND", 404, "Host principal mapping not found"),
  tooManyPrincipalMaps: (max: number) => new AppError("HOST_PRINCIPAL_MAPS_LIMIT", 409, `An organization has at most ${max} host principal mappings: use host patterns to cover several hosts with one`),
  hostNotFound: () => new AppError("HOST_NOT_FOUND", 404, "Host not found"),
  hostRetired: () => new AppError("HOST_RETIRED", 403, "This host has been retired: its certificates are revoked and it cannot renew; enroll it again with a new token"),
  alreadyRetired: () => new AppError("ALREADY_RETIRED", 409, "The host is already retired"),
  challengeInvalid: () => new AppError("RENEW_CHALLENGE_INVALID", 400, "The renewal challenge is unknown, expired or already used: ask for a new one"),
  signatureInvalid: () =>
    new AppError("RENEW_PROOF_INVALID", 403, "The signature does not prove possession of one of this host's enrolled host keys (namespace keyward-host-renew)"),
};
