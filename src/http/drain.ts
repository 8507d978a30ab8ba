import type { Server } from "node:http";
import { Server as NetServer, type Socket } from "node:net";

/**
 * Stopping a listener without losing what is in flight (SIGTERM, and Ctrl-C alike).
 *
 * A burst's tail was lost to a stop (ECONNRESET; a newcomer's Ctrl-C lost 2 of 6 certificate
 * signings so), twice over: closing the listening socket resets the connections the kernel has
 * accepted but the process has not taken yet (a busy event loop takes them late), and
 * `http.Server.close()` also closes every connection without a request under way, which a
 * connection whose request has not been read yet counts as. So the stop goes in steps:
 *
 * 1. every response from now on says `Connection: close`; the listener stays open until no
 *    connection has come for QUIET_MS (at most `arrivalMs`), so what is queued is taken;
 * 2. the listening socket closes; connections without a request yet are given the rest of
 *    `arrivalMs` to deliver it;
 * 3. idle keep-alive connections close;
 * 4. requests in flight finish, for `graceMs` at most, then whatever is left is cut.
 */
export interface Drain {
  /** Resolves once every connection is closed (or cut after `graceMs`). */
  close(graceMs: number): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
/**
 * Waits `ms`, then lets one I/O phase run before the caller decides anything: after a busy stretch
 * (the embedded database runs in this thread) the timer fires before the event loop has accepted the
 * connections and read the requests that arrived meanwhile, and a decision taken then (nothing came,
 * time is up) would reset them. setImmediate runs after the poll phase, which takes all of that in.
 */
const pause = async (ms: number) => {
  await sleep(ms);
  await new Promise<void>((resolve) => setImmediate(resolve));
};
/** No new connection for this long: the kernel's queue of accepted connections has been taken. */
const QUIET_MS = 100;

export function drainable(server: Server, arrivalMs = 2000): Drain {
  // Accepted connections whose first request has not been read yet.
  const fresh = new Set<Socket>();
  let closing = false;
  let lastConnection = 0;
  server.on("connection", (socket: Socket) => {
    lastConnection = Date.now();
    fresh.add(socket);
    socket.once("close", () => fresh.delete(socket));
  });
  server.on("request", (req, res) => {
    fresh.delete(req.socket);
    // The client must not send its next request on this connection: nobody will read it.
    if (closing) res.shouldKeepAlive = false;
  });

  return {
    async close(graceMs) {
      closing = true;
      const end = Date.now() + arrivalMs;
      do await pause(QUIET_MS / 4);
      while (Date.now() - lastConnection < QUIET_MS && Date.now() < end);
      // Stops accepting, keeping the connections accepted (http.Server.close would close the silent ones).
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
      while (fresh.size > 0 && Date.now() < end) await pause(20);
      // Now http.Server.close: idle connections (and any still silent) close; its timers stop.
      server.close();
      await Promise.race([closed, sleep(graceMs)]);
      server.closeAllConnections();
    },
  };
}
