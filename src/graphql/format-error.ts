import { unwrapResolverError } from "@apollo/server/errors";
import { type GraphQLFormattedError, GraphQLError } from "graphql";
import { isDependencyOutage, transientConflict } from "../infra/db-errors.js";
import type { Logger } from "../infra/logger.js";
import { clientError } from "../http/body.js";
import { type AppError, isAppError } from "../lib/errors.js";

// Errors GraphQL and Apollo raise themselves (syntax, unknown field, bad variable, persisted query,
// CSRF): their codes stay as they are, with the HTTP status Apollo answers them with.
const GRAPHQL_CODES: Record<string, number> = {
  GRAPHQL_PARSE_FAILED: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  BAD_USER_INPUT: 400,
  PERSISTED_QUERY_NOT_FOUND: 200,
  PERSISTED_QUERY_NOT_SUPPORTED: 200,
  OPERATION_RESOLUTION_FAILURE: 400,
  BAD_REQUEST: 400,
};

/** The extensions of an AppError in GraphQL: the same UPPER_SNAKE code as REST, and the HTTP status. */
export const appErrorExtensions = (e: AppError) => ({ code: e.code, status: e.status, ...(e.details ? { details: e.details } : {}) });

/** "Did you mean …?" names schema members a production client was not told about. */
const SUGGESTION = /\s*Did you mean [^?]*\?/g;

/** The HTTP status an Apollo or plugin error carries (`extensions.http.status`), if any. */
function httpStatusOf(error: unknown): number | undefined {
  const status = (error as GraphQLError | undefined)?.extensions?.http as { status?: unknown } | undefined;
  return typeof status?.status === "number" ? status.status : undefined;
}

/**
 * The GraphQL renderer of AppError: `extensions.code` carries the same UPPER_SNAKE code as REST and
 * `extensions.status` the HTTP status, on every error, Apollo's own included.
 */
export function createFormatError(logger: Logger, options: { hideSuggestions: boolean }) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    const where = { locations: formatted.locations, path: formatted.path };
    if (isAppError(original)) return { message: original.message, ...where, extensions: appErrorExtensions(original) };
    // PostgreSQL or Redis unavailable, or a transaction rolled back for a concurrent change: the
    // same 503 SERVICE_UNAVAILABLE as REST.
    const conflict = transientConflict(original);
    if (conflict) logger.warn({ conflict }, "transaction rolled back for a concurrent change");
    const outage = isDependencyOutage(original) || conflict ? clientError(original) : undefined;
    if (outage) return { message: outage.message, ...where, extensions: appErrorExtensions(outage) };
    // A plugin's refusal before execution (scope.ts) wraps the service's own error.
    if (original instanceof GraphQLError && isAppError(original.originalError)) {
      return { message: original.originalError.message, ...where, extensions: appErrorExtensions(original.originalError) };
    }
    const code = formatted.extensions?.code;
    if (typeof code === "string" && (code in GRAPHQL_CODES || (original instanceof GraphQLError && code !== "INTERNAL_SERVER_ERROR"))) {
      let message = formatted.message;
      // graphql-js's recursive parser overflows on absurd nesting; the client gets a plain answer.
      if (code === "GRAPHQL_PARSE_FAILED" && /call stack/i.test(message)) message = "Syntax Error: the document is nested too deeply.";
      if (options.hideSuggestions) message = message.replace(SUGGESTION, "");
      const status = httpStatusOf(original) ?? httpStatusOf(error) ?? GRAPHQL_CODES[code] ?? 400;
      return { message, ...where, extensions: { code, status } };
    }
    logger.error({ err: original }, "unhandled GraphQL error");
    return { message: "An unexpected error occurred", ...where, extensions: { code: "INTERNAL_ERROR", status: 500 } };
  };
}
