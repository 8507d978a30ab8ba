import { AppError } from "../../lib/errors.js";

export const SshKeyErrors = {
  notFound: () => new AppError("SSH_KEY_NOT_FOUND", 404, "SSH key not found"),
  invalid: (code: "WRONG_KEY_MATERIAL" | "SSH_KEY_ERROR", message: string) => new AppError(code, 400, message),
  noChallenge: () => new AppError("VERIFICATION_FAILED", 400, "Request a challenge first (GET …/verify), then sign it within 24 hours"),
  verificationFailed: () =>
    new AppError("VERIFICATION_FAILED", 400, "The signature does not verify: sign the challenge text with `ssh-keygen -Y sign -n file -f <private key> <file>` and send the .sig"),
};
