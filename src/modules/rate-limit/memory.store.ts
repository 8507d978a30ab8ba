import type { RateLimitStore, RateWindow } from "./rate-limit.store.js";

// Ended windows are dropped on read, and swept every so many writes so idle keys do not pile up.
const SWEEP_EVERY = 1000;

/** The embedded mode's counters: one process, one map. */
export function createMemoryRateStore(): RateLimitStore {
  const windows = new Map<string, RateWindow>();
  let writes = 0;
  const current = (key: string, now: number): RateWindow | null => {
    const w = windows.get(key);
    if (w && w.resetAt <= now) windows.delete(key);
    return w && w.resetAt > now ? w : null;
  };
  const write = (key: string, w: RateWindow, now: number): RateWindow => {
    windows.set(key, w);
    if (++writes % SWEEP_EVERY === 0) for (const [k, v] of windows) if (v.resetAt <= now) windows.delete(k);
    return { ...w };
  };
  return {
    add: async (key, by, durationMs, now) => {
      const w = current(key, now) ?? { count: 0, resetAt: now + durationMs };
      return write(key, { count: w.count + by, resetAt: w.resetAt }, now);
    },
    get: async (key, now) => {
      const w = current(key, now);
      return w ? { ...w } : null;
    },
    set: async (key, count, durationMs, now) => void write(key, { count, resetAt: now + durationMs }, now),
    delete: async (key) => void windows.delete(key),
  };
}
