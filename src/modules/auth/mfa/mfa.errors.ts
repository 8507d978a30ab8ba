import { AccessErrors } from "../../access/index.js";
import { AppError } from "../../../lib/errors.js";

export const MfaErrors = {
  pendingExpired: () => new AppError("MFA_SESSION_EXPIRED", 401, "The sign-in waiting for a second factor expired or is unknown: sign in again"),
  attemptInProgress: () => new AppError("MFA_ATTEMPT_IN_PROGRESS", 409, "Another second-factor attempt for this sign-in is being checked: wait for its answer"),
  invalidCode: () => new AppError("INVALID_MFA_CODE", 401, "The code is wrong, expired or was already used"),
  webauthnFailed: () => new AppError("WEBAUTHN_VERIFICATION_FAILED", 401, "The security key or passkey response could not be verified"),
  counterRegression: () =>
    new AppError("WEBAUTHN_COUNTER_REGRESSION", 401, "This authenticator's signature counter went backwards, which suggests a cloned key: it was refused"),
  challengeExpired: () => new AppError("WEBAUTHN_CHALLENGE_EXPIRED", 400, "The WebAuthn challenge expired or was already used: start again"),
  registrationFailed: (why: string) => new AppError("WEBAUTHN_REGISTRATION_FAILED", 400, `The authenticator's response could not be verified: ${why}`),
  credentialNotFound: () => new AppError("CREDENTIAL_NOT_FOUND", 404, "Credential not found"),
  totpAlreadyEnabled: () => new AppError("TOTP_ALREADY_ENABLED", 409, "An authenticator app is already enrolled: disable it first"),
  totpNotPending: () => new AppError("TOTP_NOT_PENDING", 400, "Start TOTP enrollment first"),
  totpNotEnabled: () => new AppError("TOTP_NOT_ENABLED", 404, "No authenticator app is enrolled"),
  methodNotAvailable: (method: string) => new AppError("MFA_METHOD_NOT_AVAILABLE", 400, `${method} is not enrolled for this account`),
  complianceRequired: AccessErrors.mfaComplianceRequired,
};
