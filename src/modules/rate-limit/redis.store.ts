import type { Redis } from "ioredis";
import type { RateLimitStore } from "./rate-limit.store.js";

/**
 * Adds to a window atomically. The window's end is kept in the hash on the service clock (ARGV[2]
 * is "now" from the limiter, ARGV[3] the end of a new window), so an advanced test clock ends it.
 * Redis's own expiry only collects the key once it cannot matter: the clock never runs slower than
 * real time, so the time left on it is an upper bound.
 */
const ADD = `
local c = tonumber(redis.call('HGET', KEYS[1], 'c'))
local r = redis.call('HGET', KEYS[1], 'r')
if not c or not r or tonumber(r) <= tonumber(ARGV[2]) then
  c = 0
  r = ARGV[3]
end
c = c + tonumber(ARGV[1])
redis.call('HSET', KEYS[1], 'c', c, 'r', r)
redis.call('PEXPIRE', KEYS[1], math.max(1, tonumber(r) - tonumber(ARGV[2])))
return {c, r}
`;

/** Production counters, shared by every instance. */
export function createRedisRateStore(redis: Redis, prefix: string): RateLimitStore {
  const k = (key: string) => `${prefix}rl:${key}`;
  return {
    async add(key, by, durationMs, now) {
      const [count, resetAt] = (await redis.eval(ADD, 1, k(key), by, now, now + durationMs)) as [number, string];
      return { count: Number(count), resetAt: Number(resetAt) };
    },
    async get(key, now) {
      const [count, resetAt] = await redis.hmget(k(key), "c", "r");
      if (count === null || resetAt === null || Number(resetAt) <= now) return null;
      return { count: Number(count), resetAt: Number(resetAt) };
    },
    async set(key, count, durationMs, now) {
      await redis.multi().hset(k(key), "c", count, "r", now + durationMs).pexpire(k(key), Math.max(1, durationMs)).exec();
    },
    async delete(key) {
      await redis.del(k(key));
    },
  };
}
