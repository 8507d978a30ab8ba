import type { NextFunction, Request, Response } from "express";
import helmet, { type HelmetOptions } from "helmet";

/**
 * Helmet's headers, computed once. With these options every header is a constant (no nonce, no
 * per-request input), so helmet runs once at startup against a recording response and each
 * request gets the same headers in one loop instead of a dozen middleware calls. Helmet stays the
 * source of truth for names and values.
 */
export function securityHeaders(options: HelmetOptions) {
  const headers: Array<[string, string]> = [];
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: string) => void headers.push([name, String(value)]),
    removeHeader: (name: string) => void removed.push(name),
  };
  let ran = false;
  helmet(options)({} as never, recorder as never, () => (ran = true));
  if (!ran) throw new Error("helmet did not complete synchronously");
  return (_req: Request, res: Response, next: NextFunction): void => {
    for (const [name, value] of headers) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}
