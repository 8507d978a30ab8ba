import type { KeyValueStore } from "../../infra/kv.js";
import { sha256Hex } from "../../lib/crypto/index.js";
import type { ReplayStore } from "../../lib/saml/index.js";

/** The clock skew a SAML answer's time window allows, and its replay entries outlive. */
export const CLOCK_SKEW_SECONDS = 90;

/**
 * Assertion ids already accepted, in the shared key-value store: Redis when configured (every
 * instance sees the same ids), the in-process store in the embedded single-process mode. `add` is
 * set-if-absent, so of two concurrent posts of one response exactly one gets through.
 */
export function kvReplayStore(kv: KeyValueStore, connectionId: string, now: () => Date): ReplayStore {
  return {
    async seen(id, notOnOrAfter) {
      const ttl = Math.max(60, Math.ceil((notOnOrAfter.getTime() - now().getTime()) / 1000) + 2 * CLOCK_SKEW_SECONDS);
      return !(await kv.add(`saml-replay:${connectionId}:${sha256Hex(id)}`, "1", ttl));
    },
  };
}
