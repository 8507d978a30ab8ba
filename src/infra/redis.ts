import { Redis } from "ioredis";

/** One ioredis client; consumers add their own key prefixes (kv:, sess:, rl:). */
export function connectRedis(url: string): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    lazyConnect: false,
  });
}
