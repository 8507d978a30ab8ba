import type { NextFunction, Request, Response } from "express";
import { uuid } from "../lib/crypto/index.js";

// Echo a client's id only when it is safe to put in a log line and a header.
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** One X-Request-ID per request: echoed when the client sent a sane one, generated otherwise. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.headers["x-request-id"];
  req.requestId = typeof incoming === "string" && SAFE_ID.test(incoming) ? incoming : uuid();
  res.setHeader("X-Request-ID", req.requestId);
  next();
}
