import { unwrapResolverError } from "@apollo/server/errors";
import type { GraphQLFormattedError } from "graphql";
import { GraphQLError } from "graphql";
import type { Logger } from "../infra/logger.js";
import { isAppError } from "../lib/errors.js";

// Errors GraphQL itself raises (syntax, unknown field, bad variable): their codes stay as they are.
const GRAPHQL_CODES = new Set([
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "BAD_USER_INPUT",
  "PERSISTED_QUERY_NOT_FOUND",
  "PERSISTED_QUERY_NOT_SUPPORTED",
  "OPERATION_RESOLUTION_FAILURE",
  "BAD_REQUEST",
]);

/** The GraphQL renderer of AppError: `extensions.code` carries the same UPPER_SNAKE code as REST. */
export function createFormatError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    if (isAppError(original)) {
      return {
        message: original.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code: original.code, status: original.status, ...(original.details ? { details: original.details } : {}) },
      };
    }
    const code = formatted.extensions?.code;
    if (typeof code === "string" && (GRAPHQL_CODES.has(code) || original instanceof GraphQLError && code !== "INTERNAL_SERVER_ERROR")) {
      return { message: formatted.message, locations: formatted.locations, path: formatted.path, extensions: { code } };
    }
    logger.error({ err: original }, "unhandled GraphQL error");
    return {
      message: "An unexpected error occurred",
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: "INTERNAL_ERROR" },
    };
  };
}
