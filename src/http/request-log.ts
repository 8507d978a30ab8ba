import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../infra/logger.js";
import { redactUrl } from "../lib/redact.js";

const QUIET_PATHS = new Set(["/api/health", "/metrics"]);

/**
 * One line per request when it ends: method, masked URL, status, duration and request id, nothing
 * else (headers would carry cookies and tokens; the URL's secrets are masked). Replaces pino-http,
 * whose child logger per request cost a tenth of a cheap request's CPU whether or not the line
 * was written: here nothing is allocated when the level is above info.
 */
export function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!logger.isLevelEnabled("info") || QUIET_PATHS.has(req.url)) return next();
    const started = performance.now();
    const done = (aborted: boolean) => {
      res.removeListener("finish", onFinish);
      res.removeListener("close", onClose);
      const line = {
        requestId: req.requestId,
        req: { method: req.method, url: redactUrl(req.originalUrl) },
        res: { statusCode: aborted ? undefined : res.statusCode },
        responseTime: Math.round(performance.now() - started),
      };
      if (aborted) logger.warn(line, "request aborted");
      else if (res.statusCode >= 500) logger.error(line, "request errored");
      else logger.info(line, "request completed");
    };
    const onFinish = () => done(false);
    const onClose = () => done(!res.writableFinished);
    res.once("finish", onFinish);
    res.once("close", onClose);
    next();
  };
}
