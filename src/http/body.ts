import { createRequire } from "node:module";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { isDependencyOutage, isTransientConflict } from "../infra/db-errors.js";
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

// body-parser's own size parser ("100kb" = 102,400 bytes), so both readers agree on the limit.
const parseBytes = createRequire(import.meta.url)("bytes").parse as (value: string | number) => number | null;

/** BODY_LIMIT in bytes, read as body-parser reads it (every door measures the same way). */
export function bodyLimitBytes(limit: string | number): number {
  const bytes = parseBytes(limit);
  if (bytes === null) throw new Error(`invalid body limit ${String(limit)}`);
  return bytes;
}

/** An error as body-parser reports it: clientError() maps it by its `type`. */
const bodyError = (status: number, type: string) => Object.assign(new Error(type), { status, statusCode: status, expose: true, type });

const PLAIN_JSON = new Set(["application/json", "application/json; charset=utf-8", "application/json;charset=utf-8"]);

/**
 * The common case read directly: `Content-Type: application/json` (UTF-8), no Content-Encoding, a
 * Content-Length within the limit. What body-parser would do for it (strip a BOM, `{}` for an
 * empty body, only an object or array at the top, the same error types), without its per-request
 * content-type parsing, charset decoder and stream plumbing (a twentieth of a GraphQL request's
 * CPU). Anything else (chunked, compressed, other charsets, over the limit) returns false and goes
 * to body-parser, which answers it as before.
 */
function readPlainJson(req: Request, limit: number, next: NextFunction): boolean {
  const type = req.headers["content-type"];
  const declared = req.headers["content-length"];
  if (!type || !PLAIN_JSON.has(type.toLowerCase()) || req.headers["content-encoding"] !== undefined || req.headers["transfer-encoding"] !== undefined) return false;
  if (!declared || !/^\d{1,9}$/.test(declared)) return false;
  const length = Number(declared);
  if (length > limit || req.readableEnded) return false;
  const chunks: Buffer[] = [];
  let received = 0;
  let failed = false;
  const fail = (type: string) => {
    if (failed) return;
    failed = true;
    cleanup();
    req.resume();
    next(bodyError(400, type));
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > length) fail("request.size.invalid");
    else chunks.push(chunk);
  };
  const onEnd = () => {
    if (failed) return;
    cleanup();
    if (received !== length) return fail("request.size.invalid");
    let text = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks, received).toString("utf8");
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    try {
      req.body = parseStrict(text);
    } catch {
      return next(bodyError(400, "entity.parse.failed"));
    }
    next();
  };
  const onClose = () => {
    if (!req.complete) fail("request.aborted");
  };
  const cleanup = () => {
    req.removeListener("data", onData);
    req.removeListener("end", onEnd);
    req.removeListener("close", onClose);
  };
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("close", onClose);
  return true;
}

/** body-parser's strict JSON: empty is `{}`, the top level must be an object or an array. */
function parseStrict(text: string): unknown {
  if (text.length === 0) return {};
  const first = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d]|$)/.exec(text)?.[1];
  if (first !== "{" && first !== "[") throw new SyntaxError("strict violation");
  return JSON.parse(text);
}

/**
 * JSON bodies for both doors: size-limited, then refused when nested deeper than MAX_JSON_DEPTH
 * (JSON.parse copes with any depth; the recursive code after it overflows the stack).
 */
export function jsonBody(limit: string | number): RequestHandler[] {
  const bodyParser = express.json({ limit });
  const maxBytes = bodyLimitBytes(limit);
  return [
    (req: Request, res: Response, next: NextFunction) => {
      if (!readPlainJson(req, maxBytes, next)) bodyParser(req, res, next);
    },
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
  // Rolled back for a concurrent change (a deadlock's victim): nothing was written; trying again works.
  if (isTransientConflict(err)) return new AppError("SERVICE_UNAVAILABLE", 503, "The request met a concurrent change and was not applied: try again", undefined, { "Retry-After": "1" });
  const e = err as HttpError | null;
  const known = BODY_ERRORS[e?.type ?? ""];
  if (known) return known();
  if (!e || typeof e.status !== "number" || e.status < 400 || e.status > 499) return undefined;
  if (e instanceof URIError) return new AppError("INVALID_PATH_ENCODING", 400, "The request path contains a malformed %-escape");
  if (typeof e.code === "string" && /^(Z_|ERR_)/.test(e.code)) {
    return new AppError("INVALID_BODY_ENCODING", 400, "The request body could not be decoded as its Content-Encoding says");
  }
  // One status per code (ARCHITECTURE rule 3): whatever 4xx the parser chose, this is a bad request.
  return new AppError("BAD_REQUEST", 400, "The request could not be read");
}
