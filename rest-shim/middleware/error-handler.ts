import type { NextFunction, Request, Response } from "express";
import { clientError } from "../../src/http/body.js";
import { transientConflict } from "../../src/infra/db-errors.js";
import type { Logger } from "../../src/infra/logger.js";
import { camelToSnake } from "../../src/lib/strings.js";
import { bearerChallenge } from "../../src/http/bearer-challenge.js";
import { sendError } from "../envelope.js";

/** Validation paths reach REST clients in their snake_case field names. */
function snakeValidation(details: Record<string, unknown> | undefined) {
  const errors = (details?.errors as Array<{ path: string; message: string }> | undefined) ?? [];
  const mapped = errors.map((e) => ({ path: e.path.split(".").map(camelToSnake).join("."), message: e.message }));
  return { details: { errors: mapped }, message: mapped.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join("; ") };
}

/**
 * The REST renderer of AppError (the other one is GraphQL's formatError). Nothing else answers errors.
 * `resourceMetadata`: the protected resource document a 401 or an INSUFFICIENT_SCOPE names in its
 * `WWW-Authenticate` challenge (src/http/bearer-challenge.ts).
 */
export function errorHandler(logger: Logger, options: { resourceMetadata?: string } = {}) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    // AppError, or a client mistake Express or body-parser reported (bad JSON, bad %-escape, bad gzip).
    const known = clientError(err);
    // Answered (503, try again), but worth knowing: lock orders are kept so that it does not happen.
    const conflict = transientConflict(err);
    if (conflict) logger.warn({ conflict, requestId: req.requestId }, "transaction rolled back for a concurrent change");
    if (known) {
      for (const [k, v] of Object.entries(known.headers ?? {})) res.setHeader(k, v);
      // An error with a challenge of its own (the metrics endpoint's realm) keeps it.
      const challenge = options.resourceMetadata && !res.hasHeader("WWW-Authenticate") ? bearerChallenge(known, options.resourceMetadata) : undefined;
      if (challenge) res.setHeader("WWW-Authenticate", challenge);
      if (known.code === "VALIDATION_ERROR") {
        const v = snakeValidation(known.details);
        sendError(res, known.status, known.code, `Invalid input: ${v.message}`, v.details);
      } else {
        sendError(res, known.status, known.code, known.message, known.details);
      }
      return;
    }
    logger.error({ err, requestId: req.requestId }, "unhandled error");
    sendError(res, 500, "INTERNAL_ERROR", "An unexpected error occurred");
  };
}
