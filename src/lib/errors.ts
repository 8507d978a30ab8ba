import type { ErrorCode, StatusOf } from "./error-codes.js";

export { ERROR_STATUS, type ErrorCode } from "./error-codes.js";

/**
 * The one error type of the service layer. Both transports render it: REST as the envelope's
 * `error.type`, GraphQL as `extensions.code`. Anything else that escapes becomes INTERNAL_ERROR.
 * The code is one of ERROR_STATUS's and the status the one it has there, checked by the compiler.
 */
export class AppError<C extends ErrorCode = ErrorCode> extends Error {
  constructor(
    readonly code: C,
    readonly status: StatusOf<C>,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Extra response headers (e.g. Retry-After) the REST renderer adds. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "AppError";
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/** Errors shared by every module. Module-specific ones live in `<module>.errors.ts`. */
export const CommonErrors = {
  validation: (errors: Array<{ path: string; message: string }>) =>
    new AppError("VALIDATION_ERROR", 400, errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join("; "), {
      errors,
    }),
  badRequest: (message: string) => new AppError("BAD_REQUEST", 400, message),
  authRequired: () => new AppError("AUTH_REQUIRED", 401, "Authentication required"),
  invalidToken: () => new AppError("INVALID_TOKEN", 401, "Invalid or expired session"),
  forbidden: (message = "You do not have permission to do this") => new AppError("AUTHORIZATION_ERROR", 403, message),
  insufficientScope: (required: string | undefined) =>
    new AppError(
      "INSUFFICIENT_SCOPE",
      403,
      required ? `This token lacks the ${required} scope` : "Delegated tokens cannot do this: sign in to Keyward itself",
      { required_scope: required ?? null },
    ),
  /** An organization API key on something only a person (or a delegated token) may do. */
  apiKeyRefused: (required?: string) =>
    new AppError(
      "INSUFFICIENT_SCOPE",
      403,
      required ? `This API key lacks the ${required} scope` : "Organization API keys cannot do this: it needs a person signed in",
      { required_scope: required ?? null },
    ),
  notFound: (what = "Resource") => new AppError("NOT_FOUND", 404, `${what} not found`),
  conflict: (message: string) => new AppError("CONFLICT", 409, message),
  rateLimited: (retryAfterSeconds: number) =>
    new AppError(
      "RATE_LIMIT_EXCEEDED",
      429,
      `Too many requests. Try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? "" : "s"}.`,
      { retry_after: retryAfterSeconds },
      { "Retry-After": String(retryAfterSeconds) },
    ),
  internal: () => new AppError("INTERNAL_ERROR", 500, "An unexpected error occurred"),
  unavailable: (message = "A dependency is unavailable") => new AppError("SERVICE_UNAVAILABLE", 503, message),
} as const;
