import type { NextFunction, Request, Response } from "express";
import { isAppError } from "../../src/lib/errors.js";
import type { Logger } from "../../src/infra/logger.js";
import { camelToSnake } from "../../src/lib/strings.js";
import { sendError } from "../envelope.js";

// body-parser's error types, mapped to the envelope.
const BODY_ERRORS: Record<string, [number, string, string]> = {
  "entity.parse.failed": [400, "INVALID_JSON", "The request body is not valid JSON"],
  "entity.too.large": [413, "PAYLOAD_TOO_LARGE", "The request body is too large"],
  "encoding.unsupported": [415, "UNSUPPORTED_ENCODING", "The request body encoding is not supported"],
  "charset.unsupported": [415, "UNSUPPORTED_CHARSET", "The request body charset is not supported"],
  "request.aborted": [400, "REQUEST_ABORTED", "The request was aborted"],
};

/** Validation paths reach REST clients in their snake_case field names. */
function snakeValidation(details: Record<string, unknown> | undefined) {
  const errors = (details?.errors as Array<{ path: string; message: string }> | undefined) ?? [];
  const mapped = errors.map((e) => ({ path: e.path.split(".").map(camelToSnake).join("."), message: e.message }));
  return { details: { errors: mapped }, message: mapped.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join("; ") };
}

/** The REST renderer of AppError (the other one is GraphQL's formatError). Nothing else answers errors. */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    if (isAppError(err)) {
      for (const [k, v] of Object.entries(err.headers ?? {})) res.setHeader(k, v);
      if (err.code === "VALIDATION_ERROR") {
        const v = snakeValidation(err.details);
        sendError(res, err.status, err.code, `Invalid input: ${v.message}`, v.details);
      } else {
        sendError(res, err.status, err.code, err.message, err.details);
      }
      return;
    }
    const bodyError = BODY_ERRORS[(err as { type?: string })?.type ?? ""];
    if (bodyError) {
      sendError(res, bodyError[0], bodyError[1], bodyError[2]);
      return;
    }
    logger.error({ err, requestId: req.requestId }, "unhandled error");
    sendError(res, 500, "INTERNAL_ERROR", "An unexpected error occurred");
  };
}
