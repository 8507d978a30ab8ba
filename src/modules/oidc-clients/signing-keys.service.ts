import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { generateSigningJwk, type PrivateJwk, type SecretBox, type SigningAlg, sealContexts } from "../../lib/crypto/index.js";
import { systemContext } from "../../lib/request-context.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { signingKeysRepository } from "./signing-keys.repository.js";
import { listPublishedSigningKeysPrivileged } from "./signing-keys.secrets.repository.js";

const ALGS: readonly SigningAlg[] = ["RS256", "ES256"];
const DAY = 86_400_000;
const sealContext = sealContexts.oidcSigningKey;

export interface SigningKeySet {
  /** Changes whenever a key is added or leaves the published set. */
  version: string;
  /** Active keys first (they sign), then retired keys still published for verification. */
  keys: PrivateJwk[];
}

/**
 * The provider's signing keys: one RS256 and one ES256 key are active at a time. Keys are
 * generated at first start and sealed at rest; after `rotationDays` a new key takes over signing
 * and the old one stays in the JWKS for `graceDays`, so tokens it signed still verify.
 */
export class OidcSigningKeysService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly box: SecretBox,
    private readonly audit: AuditService,
    private readonly policy: { rotationDays: number; graceDays: number },
  ) {}

  /** Creates missing keys and rotates those past their age. Safe to call from every instance. */
  async ensureCurrent(): Promise<{ created: string[]; retired: string[] }> {
    return this.db.transaction(async (tx) => {
      await signingKeysRepository.lockRotation(tx);
      const now = this.clock.now();
      const active = await signingKeysRepository.listActive(tx);
      const created: string[] = [];
      const retired: string[] = [];
      for (const alg of ALGS) {
        const current = active.filter((k) => k.alg === alg);
        const fresh = current.filter((k) => now.getTime() - k.createdAt.getTime() < this.policy.rotationDays * DAY);
        for (const old of current.filter((k) => !fresh.includes(k))) {
          await signingKeysRepository.retire(tx, old.kid, now, new Date(now.getTime() + this.policy.graceDays * DAY));
          retired.push(old.kid);
        }
        if (fresh.length > 0) continue;
        const jwk = generateSigningJwk(alg);
        await signingKeysRepository.insert(tx, { kid: jwk.kid, alg, sealed: this.box.encrypt(JSON.stringify(jwk), sealContext(jwk.kid)), now });
        created.push(jwk.kid);
      }
      if (created.length > 0 || retired.length > 0) {
        await this.audit.record(tx, systemContext("oidc-keys"), AuditAction.oidcKeysRotated, { resourceType: "oidc_signing_key", metadata: { created, retired } });
      }
      return { created, retired };
    });
  }

  /** The published set: active keys and retired keys inside their grace period. */
  async load(): Promise<SigningKeySet> {
    const rows = await listPublishedSigningKeysPrivileged(this.db, this.clock.now());
    return {
      version: rows.map((r) => `${r.kid}:${r.retiredAt ? "r" : "a"}`).join(","),
      keys: rows.map((r) => JSON.parse(this.box.decryptString(r.sealed, sealContext(r.kid))) as PrivateJwk),
    };
  }

  /** Drops keys past their grace period (nothing they signed is still valid). */
  deleteExpired(): Promise<number> {
    return signingKeysRepository.deleteExpired(this.db, this.clock.now());
  }
}
