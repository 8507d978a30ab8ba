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

/** What the IdP said of its own session at sign-in: the record less whose and which connection's it is. */
export type IdpSession = Omit<SsoSessionRecord, "connectionId" | "userId">;

/** A SAML assertion's session: its NameID (and format) and SessionIndex. */
export function samlIdpSession(r: { nameId: string; nameIdFormat?: string | undefined; sessionIndex?: string | undefined }): IdpSession {
  return { kind: "saml", nameId: r.nameId, ...(r.nameIdFormat ? { nameIdFormat: r.nameIdFormat } : {}), ...(r.sessionIndex ? { sessionIndex: r.sessionIndex } : {}) };
}

/** An OpenID Connect sign-in's session: the ID token's `sid`, if it had one. */
export function oidcIdpSession(claims: { sid?: string | undefined }): IdpSession {
  return { kind: "oidc", ...(claims.sid ? { sid: claims.sid } : {}) };
}

/**
 * Which Keyward sessions each connection issued, in the shared key-value store (Redis when
 * configured, so every instance sees them), for as long as such a session can live: per session,
 * per person at a connection, and per IdP session id. Nothing here is a credential.
 */
export class SsoSessionIndex {
  constructor(private readonly kv: KeyValueStore) {}

  /**
   * A session `connection` issued to `userId`, by a direct sign-in or by confirming a pending link
   * (the same record either way), kept as long as such a session can live (the connection's
   * session max age).
   */
  async issued(sessionId: string, connection: { id: string; sessionMaxAgeSeconds: number }, userId: string, idp: IdpSession): Promise<void> {
    await this.remember(sessionId, { ...idp, connectionId: connection.id, userId }, connection.sessionMaxAgeSeconds);
  }

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
