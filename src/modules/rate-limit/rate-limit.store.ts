/**
 * A counter in a fixed window: it starts at the first hit and lasts `durationMs` on the service
 * clock. Times are the injected clock's milliseconds, passed in by the limiter, so a test moves past
 * a window or a lock by advancing its clock instead of sleeping.
 */
export interface RateWindow {
  count: number;
  /** When the window (or lock) ends, on the service clock. */
  resetAt: number;
}

/** Where the limiter keeps its counters: in process (embedded mode) or in Redis (shared by instances). */
export interface RateLimitStore {
  /** Adds `by` (negative gives points back); a missing or ended window starts now. */
  add(key: string, by: number, durationMs: number, now: number): Promise<RateWindow>;
  /** The current window, or null when there is none or it has ended. */
  get(key: string, now: number): Promise<RateWindow | null>;
  /** Replaces the window: `count` until now + durationMs (a lock). */
  set(key: string, count: number, durationMs: number, now: number): Promise<void>;
  delete(key: string): Promise<void>;
}
