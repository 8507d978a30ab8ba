import type { KeyValueStore } from "../../infra/kv.js";
import { sha256Hex } from "../../lib/crypto/index.js";

/** What Keyward keeps of a session a connection issued: enough to end it, and to log out at the IdP. */
export interface SsoSessionRecord {
  connectionId: string;
  userId: string;
  kind: "oidc" | "saml";
  /** SAML: the assertion's NameID (and format) and SessionIndex, for an SP-initiated LogoutRequest. */
  nameId?: string;
  nameIdFormat?: string;
  sessionIndex?: string;
  /** OpenID Connect: the ID token's `sid`, which a back-channel logout token may name. */
  sid?: string;
}

/**
 * Which Keyward sessions each connection issued, in the shared key-value store (Redis when
 * configured, so every instance sees them), for as long as such a session can live: per session,
 * per person at a connection, and per IdP session id. Nothing here is a credential.
 */
export class SsoSessionIndex {
  constructor(private readonly kv: KeyValueStore) {}

  async remember(sessionId: string, record: SsoSessionRecord, ttlSeconds: number): Promise<void> {
    await this.kv.set(this.sessionKey(sessionId), JSON.stringify(record), ttlSeconds);
    await this.kv.hset(this.personKey(record.connectionId, record.userId), sessionId, "1", ttlSeconds);
    if (record.sid) await this.kv.hset(this.sidKey(record.connectionId, record.sid), sessionId, record.userId, ttlSeconds);
  }

  async of(sessionId: string): Promise<SsoSessionRecord | null> {
    const raw = await this.kv.get(this.sessionKey(sessionId));
    return raw ? (JSON.parse(raw) as SsoSessionRecord) : null;
  }

  /** The sessions a connection issued to one person. */
  async sessionsOf(connectionId: string, userId: string): Promise<string[]> {
    return Object.keys(await this.kv.hgetall(this.personKey(connectionId, userId)));
  }

  /** The sessions a connection issued within one IdP session (OpenID Connect `sid`), with their people. */
  async sessionsWithSid(connectionId: string, sid: string): Promise<{ sessionId: string; userId: string }[]> {
    return Object.entries(await this.kv.hgetall(this.sidKey(connectionId, sid))).map(([sessionId, userId]) => ({ sessionId, userId }));
  }

  /** Drops a session (ended); true when this call dropped it (of racing callers, exactly one). */
  async forget(sessionId: string, record: Pick<SsoSessionRecord, "connectionId" | "userId" | "sid">): Promise<boolean> {
    const mine = await this.kv.hdel(this.personKey(record.connectionId, record.userId), sessionId);
    if (record.sid) await this.kv.hdel(this.sidKey(record.connectionId, record.sid), sessionId);
    await this.kv.del(this.sessionKey(sessionId));
    return mine;
  }

  private sessionKey = (sessionId: string) => `sso-session:${sessionId}`;
  private personKey = (connectionId: string, userId: string) => `sso-sessions:${connectionId}:${userId}`;
  private sidKey = (connectionId: string, sid: string) => `sso-sid:${connectionId}:${sha256Hex(sid)}`;
}
