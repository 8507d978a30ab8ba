import type { Clock } from "../../infra/clock.js";
import type { KeyValueStore } from "../../infra/kv.js";
import { randomToken, safeEqual, sha256Hex } from "../../lib/crypto/index.js";

export type SsoFlowRefusal = "unknown_or_used" | "expired" | "other_browser";

/** One SSO sign-in or link in progress at an organization's identity provider. */
export interface SsoFlow {
  connectionId: string;
  flow: "login" | "link";
  /** The signed-in user a link flow belongs to. */
  userId: string | null;
  bindingHash: string;
  codeVerifier: string;
  nonce: string;
  /** SAML: the AuthnRequest's ID, the InResponseTo the answer must carry. */
  requestId?: string;
  /** Where a successful sign-in lands: a same-origin path (checked when the flow started). */
  next?: string | null;
  createdAt: number;
}

/**
 * Flow state kept server-side (Redis, or in process in the embedded mode) under the hash of the
 * `state` value: short-lived, taken once (a replayed callback finds nothing), and valid only in the
 * browser that started it. The connection is pinned here, so the callback checks the answer
 * against that connection's issuer and client, whatever the answer claims.
 */
export class SsoFlowStore {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly clock: Clock,
    private readonly ttl: number,
  ) {}

  async create(f: Pick<SsoFlow, "connectionId" | "flow" | "userId" | "requestId" | "next">, binding: string, state = randomToken(32)): Promise<{ state: string; flow: SsoFlow }> {
    const flow: SsoFlow = { ...f, bindingHash: sha256Hex(binding), codeVerifier: randomToken(48), nonce: randomToken(24), createdAt: this.clock.now().getTime() };
    await this.kv.set(this.key(state), JSON.stringify(flow), this.ttl);
    return { state, flow };
  }

  async take(state: string, binding: string | undefined): Promise<{ flow: SsoFlow } | { refused: SsoFlowRefusal; flow?: SsoFlow }> {
    return this.check(await this.kv.take(this.key(state)), binding);
  }

  /**
   * Reads a flow without using it up. SAML: the response is checked (its assertion id recorded
   * against replay) and only then the flow is `claim`ed; the record stays until it expires, so a
   * replayed response still finds its request and is refused as the replay it is.
   */
  async peek(state: string, binding: string | undefined): Promise<{ flow: SsoFlow } | { refused: SsoFlowRefusal; flow?: SsoFlow }> {
    return this.check(await this.kv.get(this.key(state)), binding);
  }

  /** Uses a peeked flow up: true for exactly one caller, however many race. */
  async claim(state: string): Promise<boolean> {
    return this.kv.add(`${this.key(state)}:used`, "1", this.ttl);
  }

  private check(raw: string | null, binding: string | undefined): { flow: SsoFlow } | { refused: SsoFlowRefusal; flow?: SsoFlow } {
    // Never issued, already used (a replayed callback), or gone from the store.
    if (!raw) return { refused: "unknown_or_used" };
    const flow = JSON.parse(raw) as SsoFlow;
    if (this.clock.now().getTime() - flow.createdAt > this.ttl * 1000) return { refused: "expired", flow };
    // Login CSRF: a callback URL delivered to another browser.
    if (!binding || !safeEqual(sha256Hex(binding), flow.bindingHash)) return { refused: "other_browser", flow };
    return { flow };
  }

  private key(state: string): string {
    return `sso-flow:${sha256Hex(state)}`;
  }
}
