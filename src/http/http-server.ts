import { createServer, type RequestListener, type Server } from "node:http";

/** A listener's read timeouts, in milliseconds (config.http.timeouts). */
export interface HttpTimeouts {
  /** The request line and headers must arrive within this (HTTP_HEADERS_TIMEOUT). */
  headersMs: number;
  /** The whole request, body included, must arrive within this (HTTP_REQUEST_TIMEOUT). */
  requestMs: number;
  /** An idle keep-alive connection closes after this (HTTP_KEEP_ALIVE_TIMEOUT). */
  keepAliveMs: number;
}

/**
 * Creates a Keyward listener (the main port, the metrics port; the caller listens), so tests create
 * theirs exactly as production does.
 *
 * A client too slow with its headers or its body gets Node's own `408 Request Timeout` with
 * `Connection: close`, and the socket closes: a body trickled a byte at a time holds a connection
 * for HTTP_REQUEST_TIMEOUT at most, not until the client gives up. A keep-alive connection left idle
 * closes after HTTP_KEEP_ALIVE_TIMEOUT; one that starts its next request and stalls meets the headers
 * timeout again. Timeouts bound only what the client sends: a slow answer of ours is not cut.
 */
export function createHttpServer(timeouts: HttpTimeouts, handler?: RequestListener): Server {
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      // Node checks the two read timeouts on this tick, every 30 s by default: a 20 s bound could
      // stretch to 50 s. A quarter of the shorter bound (at most a second) keeps them close to exact.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(Math.min(timeouts.headersMs, timeouts.requestMs) / 4))),
    },
    handler,
  );
  server.keepAliveTimeout = timeouts.keepAliveMs;
  return server;
}
