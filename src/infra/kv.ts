import type { Redis } from "ioredis";

/**
 * Short-lived shared state (session index, single-use challenges, flow state). Redis in
 * production so every instance sees the same values; an in-process map in the embedded mode.
 */
export interface KeyValueStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  /** Sets only when the key is absent (a short lock): true when this caller set it. */
  add(key: string, value: string, ttlSeconds: number): Promise<boolean>;
  /** Reads and deletes in one step: a single-use value can be taken once only. */
  take(key: string): Promise<string | null>;
  del(key: string): Promise<void>;
  hset(key: string, field: string, value: string, ttlSeconds?: number): Promise<void>;
  hgetall(key: string): Promise<Record<string, string>>;
  /** Removes a field; true when this call removed it (of racing callers, exactly one). */
  hdel(key: string, field: string): Promise<boolean>;
}

export function createRedisKv(redis: Redis, prefix: string): KeyValueStore {
  const k = (key: string) => `${prefix}kv:${key}`;
  return {
    get: (key) => redis.get(k(key)),
    async set(key, value, ttl) {
      if (ttl) await redis.set(k(key), value, "EX", ttl);
      else await redis.set(k(key), value);
    },
    add: async (key, value, ttl) => (await redis.set(k(key), value, "EX", ttl, "NX")) === "OK",
    take: (key) => redis.getdel(k(key)),
    del: async (key) => void (await redis.del(k(key))),
    async hset(key, field, value, ttl) {
      const multi = redis.multi().hset(k(key), field, value);
      // Never shorten the expiry of the whole hash: only extend it.
      if (ttl) multi.expire(k(key), ttl, "GT").expire(k(key), ttl, "NX");
      await multi.exec();
    },
    hgetall: (key) => redis.hgetall(k(key)),
    hdel: async (key, field) => (await redis.hdel(k(key), field)) === 1,
  };
}

interface Entry {
  value: string | Map<string, string>;
  expiresAt?: number;
}

export function createMemoryKv(): KeyValueStore {
  const data = new Map<string, Entry>();
  const live = (key: string): Entry | undefined => {
    const e = data.get(key);
    if (e?.expiresAt !== undefined && e.expiresAt <= Date.now()) {
      data.delete(key);
      return undefined;
    }
    return e;
  };
  const hash = (key: string): Map<string, string> | undefined => {
    const v = live(key)?.value;
    return v instanceof Map ? v : undefined;
  };
  return {
    get: async (key) => {
      const v = live(key)?.value;
      return typeof v === "string" ? v : null;
    },
    set: async (key, value, ttl) => void data.set(key, { value, expiresAt: ttl ? Date.now() + ttl * 1000 : undefined }),
    add: async (key, value, ttl) => {
      if (live(key)) return false;
      data.set(key, { value, expiresAt: Date.now() + ttl * 1000 });
      return true;
    },
    take: async (key) => {
      const v = live(key)?.value;
      data.delete(key);
      return typeof v === "string" ? v : null;
    },
    del: async (key) => void data.delete(key),
    hset: async (key, field, value, ttl) => {
      const entry = live(key) ?? { value: new Map<string, string>() };
      if (!(entry.value instanceof Map)) entry.value = new Map();
      entry.value.set(field, value);
      if (ttl) entry.expiresAt = Math.max(entry.expiresAt ?? 0, Date.now() + ttl * 1000);
      data.set(key, entry);
    },
    hgetall: async (key) => Object.fromEntries(hash(key) ?? []),
    hdel: async (key, field) => hash(key)?.delete(field) ?? false,
  };
}
