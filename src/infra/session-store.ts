import RedisStore from "connect-redis";
import session from "express-session";
import type { Redis } from "ioredis";
import { sha256Hex } from "../lib/crypto/index.js";

/** What one session looks like in the store (express-session's shape plus Keyward's `auth`). */
export interface StoredSession {
  cookie: { originalMaxAge: number | null; expires?: string | Date | null; httpOnly?: boolean; path?: string };
  auth?: SessionAuth;
  [key: string]: unknown;
}

export interface SessionAuth {
  /** Public id, shown in session lists; never the token. */
  id: string;
  userId: string;
  createdAt: number;
  lastSeenAt: number;
  absoluteExpiresAt: number;
  idleTimeout: number;
  rememberMe: boolean;
  /** How the user signed in ("password", "password+totp", "passkey" …): OIDC reports it as `amr`. */
  method?: string;
  ip: string | null;
  userAgent: string | null;
}

/** The session records, keyed by the SHA-256 of the session token (the token itself is never stored). */
export interface SessionRecordStore {
  get(tokenHash: string): Promise<StoredSession | null>;
  set(tokenHash: string, data: StoredSession): Promise<void>;
  destroy(tokenHash: string): Promise<void>;
}

const promisify = (store: session.Store): SessionRecordStore => ({
  get: (hash) =>
    new Promise((resolve, reject) =>
      store.get(hash, (err, data) => (err ? reject(err) : resolve((data as unknown as StoredSession) ?? null))),
    ),
  set: (hash, data) =>
    new Promise((resolve, reject) =>
      store.set(hash, data as unknown as session.SessionData, (err) => (err ? reject(err) : resolve())),
    ),
  destroy: (hash) => new Promise((resolve, reject) => store.destroy(hash, (err) => (err ? reject(err) : resolve()))),
});

/**
 * express-session sees raw session ids (the cookie value); this wrapper stores them under their
 * hash, so the cookie and `Authorization: Bearer` name the same record and a store dump is useless.
 */
class HashedStore extends session.Store {
  constructor(private readonly inner: session.Store) {
    super();
  }
  override get(sid: string, cb: (err: unknown, session?: session.SessionData | null) => void) {
    this.inner.get(sha256Hex(sid), cb);
  }
  override set(sid: string, data: session.SessionData, cb?: (err?: unknown) => void) {
    this.inner.set(sha256Hex(sid), data, cb);
  }
  override destroy(sid: string, cb?: (err?: unknown) => void) {
    this.inner.destroy(sha256Hex(sid), cb);
  }
  override touch(sid: string, data: session.SessionData, cb?: () => void) {
    if (this.inner.touch) this.inner.touch(sha256Hex(sid), data, cb);
    else cb?.();
  }
}

/** connect-redis on Redis (shared by every instance), express-session's MemoryStore in the embedded mode. */
export function createSessionStores(redis: Redis | undefined, prefix: string) {
  const inner: session.Store = redis
    ? new RedisStore({ client: redis, prefix: `${prefix}sess:`, ttl: 86400 })
    : new session.MemoryStore();
  return { records: promisify(inner), expressStore: new HashedStore(inner) };
}
