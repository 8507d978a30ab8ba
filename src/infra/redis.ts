import { Redis } from "ioredis";
import type { Logger } from "./logger.js";

/**
 * One ioredis client; consumers add their own key prefixes (kv:, sess:, rl:). While Redis is
 * unreachable ioredis reports every failed reconnection as an `error` event, and prints each one
 * raw to stderr when nothing listens: here an outage is one structured warning when it starts and
 * one line when the connection is back (requests meanwhile answer 503 on their own).
 */
export function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    lazyConnect: false,
    // Reconnect attempts 50 ms apart, growing to half a second (ioredis's default grows to 2 s):
    // service is back within about half a second of Redis's return, for one cheap attempt a
    // half-second while it is away.
    retryStrategy: (attempt) => Math.min(attempt * 50, 500),
  });
  let down = false;
  redis.on("error", (err: NodeJS.ErrnoException) => {
    if (down) return;
    down = true;
    // The message and code only: the URL (and a password in it) never reaches the log.
    logger.warn({ redis: { code: err.code, message: err.message } }, "redis connection lost: sessions and rate limits answer 503 until it is back");
  });
  redis.on("ready", () => {
    if (!down) return;
    down = false;
    logger.info("redis connection restored");
  });
  return redis;
}
