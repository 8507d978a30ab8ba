import type { Clock } from "../../../infra/clock.js";
import type { KeyValueStore } from "../../../infra/kv.js";
import { randomToken } from "../../../lib/crypto/index.js";

/** How long a WebAuthn ceremony may take between its options and its answer. */
export const CHALLENGE_TTL = 300;

interface StoredChallenge {
  challenge: string;
  userId: string | null;
  createdAt: number;
}

/**
 * WebAuthn challenges (registration or sign-in): single-use, and short-lived on the service clock.
 * The store's TTL only collects them; the lifetime is checked here, as for pending sign-ins and
 * OAuth flows, so both stores answer alike and a test advances the clock instead of waiting.
 */
export class WebAuthnChallenges {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly clock: Clock,
    private readonly kind: "reg" | "auth",
  ) {}

  async issue(challenge: string, userId: string | null): Promise<string> {
    const challengeId = randomToken(18);
    const stored: StoredChallenge = { challenge, userId, createdAt: this.clock.now().getTime() };
    await this.kv.set(this.key(challengeId), JSON.stringify(stored), CHALLENGE_TTL);
    return challengeId;
  }

  /** Takes the challenge (it cannot be used again); null when unknown, used or expired. */
  async take(challengeId: string): Promise<{ challenge: string; userId: string | null } | null> {
    const raw = await this.kv.take(this.key(challengeId));
    if (!raw) return null;
    const stored = JSON.parse(raw) as StoredChallenge;
    if (this.clock.now().getTime() - stored.createdAt > CHALLENGE_TTL * 1000) return null;
    return { challenge: stored.challenge, userId: stored.userId };
  }

  private key(challengeId: string): string {
    return `webauthn:${this.kind}:${challengeId}`;
  }
}
