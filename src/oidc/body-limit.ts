import type { NextFunction, Request, Response } from "express";
import type Provider from "oidc-provider";

/**
 * Oversized bodies on the provider's endpoints (token, revocation, introspection, device
 * authorization, PAR, the logout confirmation and device-code forms) answer 413 with an OAuth
 * error, as REST and GraphQL answer 413, instead of oidc-provider's 400 "failed to parse the request body".
 *
 * Nothing here reads a body: oidc-provider reads its own, and a body parser before it would take the
 * stream from it. A declared Content-Length is refused before anything runs (the consent forms,
 * which read no body, included); a chunked body (no length to check) is counted while the provider
 * reads it, and the provider's refusal becomes the 413.
 */

/** oidc-provider reads at most this much of a body (lib/shared/selective_body.js) and refuses more with 400. */
export const PROVIDER_BODY_LIMIT = 56 * 1024;

const tooLarge = (limit: number) => ({ error: "invalid_request", error_description: `The request body is larger than ${limit} bytes` });

/**
 * Express, in front of the provider and the interaction forms: a Content-Length beyond the limit is
 * answered at once. The body is left unread, so the connection closes after the answer rather
 * than draining what the client still sends.
 */
export function refuseDeclaredOversize(limit: number) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const declared = req.headers["content-length"];
    if (declared === undefined || !/^\d+$/.test(declared) || Number(declared) <= limit) return next();
    res.status(413).set({ "Cache-Control": "no-store", Connection: "close" }).json(tooLarge(limit));
  };
}

type KoaMiddleware = Parameters<Provider["use"]>[0];

/** Passes a body through while it stays within `limit`; beyond it, fails the read (nothing of it is handled). */
async function* capped(source: AsyncIterable<Buffer>, limit: number, onExceeded: () => void): AsyncGenerator<Buffer> {
  let received = 0;
  for await (const chunk of source) {
    received += chunk.length;
    if (received > limit) {
      onExceeded();
      throw new Error("request body too large");
    }
    yield chunk;
  }
}

/**
 * Inside the provider (provider.use, before its routes): a chunked body is read through a counter.
 * Past the limit the provider's read fails, so it handles nothing of the request, and its 400 for
 * the unreadable body is turned into the 413. The limit must not exceed PROVIDER_BODY_LIMIT, or
 * the provider's own 400 would come first.
 */
export function limitStreamedBodies(limit: number): KoaMiddleware {
  return async (ctx, next) => {
    const req = ctx.req;
    let exceeded = false;
    // Only a body without a declared length: one with it was checked in front (refuseDeclaredOversize).
    if (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] !== undefined) {
      const iterator = req.iterator.bind(req);
      const onExceeded = () => {
        exceeded = true;
      };
      // oidc-provider reads with req.iterator(); the async iterator is covered as well.
      type Chunks = ReturnType<typeof req.iterator>;
      req.iterator = (options) => capped(iterator(options), limit, onExceeded) as Chunks;
      req[Symbol.asyncIterator] = () => capped(iterator(), limit, onExceeded) as Chunks;
    }
    await next();
    if (!exceeded) return;
    ctx.status = 413;
    ctx.set({ "Cache-Control": "no-store", Connection: "close" });
    ctx.body = tooLarge(limit);
  };
}
