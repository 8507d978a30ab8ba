import type { Clock } from "../../infra/clock.js";
import type { KeyValueStore } from "../../infra/kv.js";
import { randomToken, safeEqual, sha256Hex } from "../../lib/crypto/index.js";
import type { FlowKind, ProviderName } from "./external-auth.schemas.js";

export type FlowRefusal = "unknown_or_used" | "wrong_provider" | "expired" | "other_browser";

/** One sign-in, registration or link in progress at a provider. */
export interface OAuthFlow {
  provider: ProviderName;
  flow: FlowKind;
  /** The signed-in user a link flow belongs to. */
  userId: string | null;
  /** Hash of the browser-binding cookie the flow was started with. */
  bindingHash: string;
  codeVerifier: string;
  nonce: string;
  next: string | null;
  createdAt: number;
}

/**
 * Flow state kept server-side (Redis, or in process in the embedded mode) under the hash of the
 * `state` value: short-lived, taken once, and valid only in the browser that started it.
 */
export class OAuthFlowStore {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly clock: Clock,
    private readonly ttl: number,
  ) {}

  async create(f: Omit<OAuthFlow, "createdAt" | "bindingHash" | "codeVerifier" | "nonce">, binding: string): Promise<{ state: string; flow: OAuthFlow }> {
    const state = randomToken(32);
    const flow: OAuthFlow = { ...f, bindingHash: sha256Hex(binding), codeVerifier: randomToken(48), nonce: randomToken(24), createdAt: this.clock.now().getTime() };
    await this.kv.set(this.key(state), JSON.stringify(flow), this.ttl);
    return { state, flow };
  }

  /**
   * Takes the flow for `state` (it cannot be used again, whatever happens next) if it is unexpired,
   * for this provider, and comes back to the browser that started it; otherwise says why not.
   */
  async take(state: string, provider: ProviderName, binding: string | undefined): Promise<{ flow: OAuthFlow } | { refused: FlowRefusal; flow?: OAuthFlow }> {
    const raw = await this.kv.take(this.key(state));
    // Never issued, already used (replay), or gone from the store.
    if (!raw) return { refused: "unknown_or_used" };
    const flow = JSON.parse(raw) as OAuthFlow;
    // A state replayed against another provider's callback (mix-up).
    if (flow.provider !== provider) return { refused: "wrong_provider", flow };
    // Past its lifetime (measured on the service clock, not only the store's TTL).
    if (this.clock.now().getTime() - flow.createdAt > this.ttl * 1000) return { refused: "expired", flow };
    // Login CSRF: a callback URL delivered to another browser (no or another binding cookie).
    if (!binding || !safeEqual(sha256Hex(binding), flow.bindingHash)) return { refused: "other_browser", flow };
    return { flow };
  }

  private key(state: string): string {
    return `oauth-flow:${sha256Hex(state)}`;
  }
}
