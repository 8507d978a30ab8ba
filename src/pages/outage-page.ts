import type { NextFunction, Request, Response } from "express";
import { clientError } from "../http/body.js";
import { escapeHtml, layout, pageCsp } from "./layout.js";

/**
 * A person in a browser (a hosted page, an emailed link, the sign-in pages of an OpenID flow) who
 * meets PostgreSQL or Redis down gets a page saying to try again shortly, with 503 and Retry-After,
 * rather than a JSON envelope. API clients (Accept: application/json or anything else) keep the
 * envelope of the REST error renderer that follows.
 */
export function outagePage(brand: string) {
  return (err: unknown, req: Request, res: Response, next: NextFunction): void => {
    const known = clientError(err);
    if (res.headersSent || known?.code !== "SERVICE_UNAVAILABLE" || req.accepts(["json", "html"]) !== "html") return next(err);
    for (const [k, v] of Object.entries(known.headers ?? {})) res.setHeader(k, v);
    res.setHeader("Content-Security-Policy", pageCsp());
    res.setHeader("Cache-Control", "no-store");
    res
      .status(503)
      .type("html")
      .send(
        layout(
          brand,
          "Try again shortly",
          `<h1>Try again shortly</h1>
<p>${escapeHtml(brand)} is briefly unavailable and did not complete your request. Go back and try again in a few seconds.</p>`,
          false,
        ),
      );
  };
}
