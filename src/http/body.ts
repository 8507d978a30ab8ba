import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { isDependencyOutage } from "../infra/db-errors.js";
import { AppError, isAppError } from "../lib/errors.js";

/** No Keyward input nests deeper than a few levels; recursive code downstream must never see more. */
export const MAX_JSON_DEPTH = 32;

/** True when a parsed JSON value nests objects/arrays deeper than `max` (walked without recursion). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

const tooDeep = () => new AppError("JSON_TOO_DEEP", 400, `The request body is nested deeper than ${MAX_JSON_DEPTH} levels`);

/**
 * JSON bodies for both doors: size-limited by body-parser, then refused when nested deeper than
 * MAX_JSON_DEPTH (JSON.parse copes with any depth; the recursive code after it overflows the stack).
 */
export function jsonBody(limit: string | number): RequestHandler[] {
  return [
    express.json({ limit }),
    (req: Request, _res: Response, next: NextFunction) => next(nestsDeeperThan(req.body, MAX_JSON_DEPTH) ? tooDeep() : undefined),
  ];
}

// body-parser's error types.
const BODY_ERRORS: Record<string, () => AppError> = {
  "entity.parse.failed": () => new AppError("INVALID_JSON", 400, "The request body is not valid JSON"),
  "entity.too.large": () => new AppError("PAYLOAD_TOO_LARGE", 413, "The request body is too large"),
  "encoding.unsupported": () => new AppError("UNSUPPORTED_ENCODING", 415, "The request body encoding is not supported"),
  "charset.unsupported": () => new AppError("UNSUPPORTED_CHARSET", 415, "The request body charset is not supported"),
  "request.aborted": () => new AppError("REQUEST_ABORTED", 400, "The request was aborted"),
  "request.size.invalid": () => new AppError("INVALID_CONTENT_LENGTH", 400, "The request body does not match its Content-Length"),
};

type HttpError = Error & { status?: number; type?: string; code?: string };

/**
 * The client's mistakes that Express and body-parser report as http-errors (status 4xx) rather
 * than AppError, as the AppError both renderers answer: a body that does not inflate under its
 * Content-Encoding, a malformed %-escape in a path parameter, bad JSON. Their own messages are not
 * passed on (the router's quotes the raw parameter, which may be an invitation token), and they
 * are not logged as failures of ours. Anything else is not a client error: undefined.
 */
export function clientError(err: unknown): AppError | undefined {
  if (isAppError(err)) return err;
  // PostgreSQL or Redis down or restarting: not the client's fault, but an answer it can act on.
  if (isDependencyOutage(err)) return new AppError("SERVICE_UNAVAILABLE", 503, "The service is temporarily unavailable: try again shortly", undefined, { "Retry-After": "5" });
  const e = err as HttpError | null;
  const known = BODY_ERRORS[e?.type ?? ""];
  if (known) return known();
  if (!e || typeof e.status !== "number" || e.status < 400 || e.status > 499) return undefined;
  if (e instanceof URIError) return new AppError("INVALID_PATH_ENCODING", 400, "The request path contains a malformed %-escape");
  if (typeof e.code === "string" && /^(Z_|ERR_)/.test(e.code)) {
    return new AppError("INVALID_BODY_ENCODING", 400, "The request body could not be decoded as its Content-Encoding says");
  }
  return new AppError("BAD_REQUEST", e.status, "The request could not be read");
}
