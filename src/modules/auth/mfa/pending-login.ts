import type { Clock } from "../../../infra/clock.js";
import type { KeyValueStore } from "../../../infra/kv.js";
import { randomToken, sha256Hex } from "../../../lib/crypto/index.js";

export interface PendingLogin {
  userId: string;
  rememberMe: boolean;
  method: string;
  createdAt: number;
  /** The client the password was checked for: the second factor must come from the same one. */
  userAgent: string | null;
  /** The password the first step checked (a digest of its hash): changed since, the sign-in fails. */
  passwordFingerprint?: string;
  /** A pending SSO link the sign-in confirms once the second factor is in (the SSO module's id). */
  ssoLink?: string;
}

/** Longest a second-factor check can take before a crashed attempt's hold lapses. */
const HOLD_SECONDS = 30;

/**
 * A sign-in whose password checked out and that waits for its second factor: short-lived, stored
 * under the hash of a token only the client holds (body or HttpOnly cookie), and single-use.
 */
export class PendingLoginStore {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly clock: Clock,
    private readonly ttl: number,
  ) {}

  async create(p: Omit<PendingLogin, "createdAt">): Promise<{ token: string; expiresAt: Date }> {
    const token = `kwm_${randomToken(32)}`;
    const now = this.clock.now();
    await this.kv.set(`mfa-pending:${sha256Hex(token)}`, JSON.stringify({ ...p, createdAt: now.getTime() }), this.ttl);
    return { token, expiresAt: new Date(now.getTime() + this.ttl * 1000) };
  }

  async get(token: string): Promise<PendingLogin | null> {
    const raw = await this.kv.get(`mfa-pending:${sha256Hex(token)}`);
    if (!raw) return null;
    const p = JSON.parse(raw) as PendingLogin;
    return this.clock.now().getTime() - p.createdAt > this.ttl * 1000 ? null : p;
  }

  /**
   * Holds the pending sign-in for one second-factor attempt: parallel attempts on the same sign-in
   * (eight backup codes at once) are refused instead of each spending a code. False when held.
   */
  async hold(token: string): Promise<{ release(): Promise<void> } | null> {
    const key = `mfa-pending-hold:${sha256Hex(token)}`;
    if (!(await this.kv.add(key, "1", HOLD_SECONDS))) return null;
    return { release: () => this.kv.del(key) };
  }

  /** Ends it: once a second factor succeeded, the token cannot start another session. */
  async take(token: string): Promise<PendingLogin | null> {
    const raw = await this.kv.take(`mfa-pending:${sha256Hex(token)}`);
    return raw ? (JSON.parse(raw) as PendingLogin) : null;
  }
}
