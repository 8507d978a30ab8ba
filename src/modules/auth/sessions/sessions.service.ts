import type { Clock } from "../../../infra/clock.js";
import type { KeyValueStore } from "../../../infra/kv.js";
import type { SessionAuth, SessionRecordStore, StoredSession } from "../../../infra/session-store.js";
import { randomToken, sha256Hex, uuid } from "../../../lib/crypto/index.js";

export interface SessionPolicy {
  idleTimeout: number;
  absoluteTimeout: number;
  rememberMeIdleTimeout: number;
  rememberMeAbsoluteTimeout: number;
}

export interface SessionView {
  id: string;
  ipAddress: string | null;
  userAgent: string | null;
  createdAt: Date;
  lastActivityAt: Date;
  expiresAt: Date;
  rememberMe: boolean;
  current: boolean;
}

export interface CreatedSession {
  token: string;
  session: SessionAuth;
  expiresAt: Date;
}

/** Token prefix: makes leaked session tokens recognisable to secret scanners. */
export const SESSION_TOKEN_PREFIX = "kws_";
// Writing lastSeenAt on every request would turn each read into a write; a minute of slack is plenty.
const TOUCH_INTERVAL_MS = 60_000;
const indexKey = (userId: string) => `user-sessions:${userId}`;

/**
 * One session store for both doors: the browser cookie and `Authorization: Bearer` carry the same
 * token. Sessions slide: each use extends the idle deadline, never past the absolute cap.
 */
export class SessionsService {
  private readonly revokeAllListeners: Array<(userId: string) => Promise<unknown>> = [];

  constructor(
    private readonly records: SessionRecordStore,
    private readonly kv: KeyValueStore,
    private readonly clock: Clock,
    private readonly policy: SessionPolicy,
  ) {}

  async create(userId: string, meta: { rememberMe: boolean; ip: string | null; userAgent: string | null; method?: string; maxAgeSeconds?: number }): Promise<CreatedSession> {
    const now = this.clock.now().getTime();
    const policy = meta.rememberMe ? this.policy.rememberMeAbsoluteTimeout : this.policy.absoluteTimeout;
    // A sign-in may bound its session further (SSO: the organization's lifetime), never extend it.
    const absolute = meta.maxAgeSeconds ? Math.min(policy, meta.maxAgeSeconds) : policy;
    const auth: SessionAuth = {
      id: uuid(),
      userId,
      createdAt: now,
      lastSeenAt: now,
      absoluteExpiresAt: now + absolute * 1000,
      idleTimeout: meta.rememberMe ? this.policy.rememberMeIdleTimeout : this.policy.idleTimeout,
      rememberMe: meta.rememberMe,
      ...(meta.method ? { method: meta.method } : {}),
      ip: meta.ip,
      userAgent: meta.userAgent?.slice(0, 512) ?? null,
    };
    const token = SESSION_TOKEN_PREFIX + randomToken(32);
    const hash = sha256Hex(token);
    // The record and its place in the user's index, sent together (one round trip, not two). If
    // either fails the token is never handed out; an index entry without its record is dropped
    // when the index is next read.
    await Promise.all([this.records.set(hash, this.toRecord(auth)), this.kv.hset(indexKey(userId), auth.id, hash, absolute)]);
    return { token, session: auth, expiresAt: new Date(auth.absoluteExpiresAt) };
  }

  /** The live session for a token, slid forward; null when unknown, idle too long or past its cap. */
  async resolve(token: string, preloaded?: StoredSession | null): Promise<SessionAuth | null> {
    const hash = sha256Hex(token);
    const record = preloaded ?? (await this.records.get(hash));
    const auth = record?.auth;
    if (!auth) return null;
    const now = this.clock.now().getTime();
    if (now >= auth.absoluteExpiresAt || now - auth.lastSeenAt > auth.idleTimeout * 1000) {
      await this.destroy(auth.userId, auth.id, hash);
      return null;
    }
    if (now - auth.lastSeenAt >= TOUCH_INTERVAL_MS) {
      const touched = { ...auth, lastSeenAt: now };
      await this.records.set(hash, { ...record, ...this.toRecord(touched) });
      return touched;
    }
    return auth;
  }

  /** When an idle session expires if it is not used again. */
  expiresAt(auth: SessionAuth): Date {
    return new Date(Math.min(auth.absoluteExpiresAt, auth.lastSeenAt + auth.idleTimeout * 1000));
  }

  async list(userId: string, currentId: string | null): Promise<SessionView[]> {
    const index = await this.kv.hgetall(indexKey(userId));
    const views: SessionView[] = [];
    for (const [id, hash] of Object.entries(index)) {
      const auth = (await this.records.get(hash))?.auth;
      const now = this.clock.now().getTime();
      if (!auth || now >= auth.absoluteExpiresAt || now - auth.lastSeenAt > auth.idleTimeout * 1000) {
        await this.destroy(userId, id, hash);
        continue;
      }
      views.push({
        id,
        ipAddress: auth.ip,
        userAgent: auth.userAgent,
        createdAt: new Date(auth.createdAt),
        lastActivityAt: new Date(auth.lastSeenAt),
        expiresAt: this.expiresAt(auth),
        rememberMe: auth.rememberMe,
        current: id === currentId,
      });
    }
    return views.sort((a, b) => b.lastActivityAt.getTime() - a.lastActivityAt.getTime());
  }

  /** One of the user's live sessions by its public id (how it signed in, when it ends); null when gone. */
  async find(userId: string, sessionId: string): Promise<SessionAuth | null> {
    const hash = (await this.kv.hgetall(indexKey(userId)))[sessionId];
    const auth = hash ? ((await this.records.get(hash))?.auth ?? null) : null;
    return auth && this.clock.now().getTime() < auth.absoluteExpiresAt ? auth : null;
  }

  /** Revokes one of the user's sessions by its public id; false when it is not theirs or gone. */
  async revoke(userId: string, sessionId: string): Promise<boolean> {
    const hash = (await this.kv.hgetall(indexKey(userId)))[sessionId];
    if (!hash) return false;
    await this.destroy(userId, sessionId, hash);
    return true;
  }

  async revokeToken(token: string): Promise<SessionAuth | null> {
    const hash = sha256Hex(token);
    const auth = (await this.records.get(hash))?.auth ?? null;
    if (auth) await this.destroy(auth.userId, auth.id, hash);
    else await this.records.destroy(hash);
    return auth;
  }

  /**
   * Work that must follow every "end all sessions" (reset, sign out everywhere, suspension,
   * deletion): the OIDC tokens acting for the user end with them.
   */
  onRevokeAll(listener: (userId: string) => Promise<unknown>): void {
    this.revokeAllListeners.push(listener);
  }

  /** Revokes every session of a user (reset, suspension, deletion), optionally keeping one, and the tokens acting for the user. */
  async revokeAll(userId: string, exceptSessionId?: string | null): Promise<number> {
    await Promise.all(this.revokeAllListeners.map((listener) => listener(userId)));
    const index = await this.kv.hgetall(indexKey(userId));
    const ended = await Promise.all(
      Object.entries(index)
        .filter(([id]) => id !== exceptSessionId)
        .map(([id, hash]) => this.destroy(userId, id, hash)),
    );
    // Concurrent calls see the same index: each session is counted by the call that removed it.
    return ended.filter(Boolean).length;
  }

  private async destroy(userId: string, id: string, hash: string): Promise<boolean> {
    await this.records.destroy(hash);
    return this.kv.hdel(indexKey(userId), id);
  }

  private toRecord(auth: SessionAuth): StoredSession {
    // express-session's cookie block: its `expires` also sets the store TTL (connect-redis, MemoryStore).
    return {
      cookie: { originalMaxAge: null, expires: new Date(auth.absoluteExpiresAt).toISOString(), httpOnly: true, path: "/" },
      auth,
    };
  }
}
