import type { Response } from "express";
import { toSnake } from "../src/lib/strings.js";

export const ENVELOPE_VERSION = "1.0";

/**
 * Writes the envelope as it is, without Express's res.json: no ETag (a hash of every body, for
 * answers that are per caller and change with every request id, so no cache could reuse one) and
 * none of its settings lookups. A HEAD request gets the headers only (Node drops the body).
 */
function writeJson(res: Response, status: number, envelope: unknown): void {
  const body = JSON.stringify(envelope);
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

/** The success envelope of the original API: `{version, success, code, message, request_id, data}`. */
export function sendData(res: Response, status: number, message: string, data?: unknown): void {
  writeJson(res, status, {
    version: ENVELOPE_VERSION,
    success: true,
    code: status,
    message,
    request_id: res.req.requestId,
    ...(data === undefined ? {} : { data: toSnake(data) }),
  });
}

/** A list answer: `{ <key>: items, count }` (the shape every list of the original API has). */
export function sendList(res: Response, status: number, message: string, key: string, items: readonly unknown[]): void {
  sendData(res, status, message, { [key]: items, count: items.length });
}

export function sendError(
  res: Response,
  status: number,
  type: string,
  message: string,
  details?: Record<string, unknown>,
): void {
  writeJson(res, status, {
    version: ENVELOPE_VERSION,
    success: false,
    code: status,
    message,
    request_id: res.req.requestId,
    error: { type, details: details ?? {} },
  });
}
