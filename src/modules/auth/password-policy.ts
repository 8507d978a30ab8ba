import { CommonErrors } from "../../lib/errors.js";

// NIST SP 800-63B §5.1.1.2: length limits, no composition rules, refuse known-bad choices.
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

/** A short list of the most common passwords that pass the length rule. */
const COMMON = new Set([
  "password", "password1", "password123", "12345678", "123456789", "1234567890", "qwertyui", "qwerty123",
  "iloveyou", "11111111", "00000000", "abc12345", "letmein1", "welcome1", "sunshine", "princess",
  "football", "baseball", "superman", "trustno1", "passw0rd", "p@ssw0rd", "changeme", "admin123",
  "starwars", "whatever", "qwertyuiop", "1q2w3e4r", "zaq12wsx", "computer", "michelle", "jennifer",
]);

/** Throws VALIDATION_ERROR (on `field`) when the password breaks a rule. */
export function assertPasswordAcceptable(password: string, email: string, field = "password"): void {
  const fail = (message: string) => {
    throw CommonErrors.validation([{ path: field, message }]);
  };
  if ([...password].length < PASSWORD_MIN) fail(`must be at least ${PASSWORD_MIN} characters`);
  if ([...password].length > PASSWORD_MAX) fail(`must be at most ${PASSWORD_MAX} characters`);
  const lower = password.toLowerCase();
  if (lower === email.toLowerCase() || lower === email.split("@")[0]?.toLowerCase()) fail("must not be your email address");
  if (COMMON.has(lower)) fail("is too common; choose a less guessable password");
}
