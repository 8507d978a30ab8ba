import { desc, eq, gt, isNull, or, sql } from "drizzle-orm";
import { oidcSigningKeys } from "../../../schema/index.js";
import type { Clock } from "../../infra/clock.js";
import { resultRows, type Db } from "../../infra/db.js";
import { generateSigningJwk, type PrivateJwk, type SecretBox, type SigningAlg } from "../../lib/crypto/index.js";
import { systemContext } from "../../lib/request-context.js";
import { AuditAction } from "../audit/audit.actions.js";
import type { AuditService } from "../audit/audit.service.js";

const ALGS: readonly SigningAlg[] = ["RS256", "ES256"];
const DAY = 86_400_000;
// Arbitrary constant: serialises key generation and rotation across instances.
const KEYS_LOCK_ID = 7420003;
const sealContext = (kid: string) => `oidc-signing-key:${kid}`;

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
      await tx.execute(sql`select pg_advisory_xact_lock(${KEYS_LOCK_ID})`);
      const now = this.clock.now();
      const active = await tx.select({ kid: oidcSigningKeys.kid, alg: oidcSigningKeys.alg, createdAt: oidcSigningKeys.createdAt }).from(oidcSigningKeys).where(isNull(oidcSigningKeys.retiredAt));
      const created: string[] = [];
      const retired: string[] = [];
      for (const alg of ALGS) {
        const current = active.filter((k) => k.alg === alg);
        const fresh = current.filter((k) => now.getTime() - k.createdAt.getTime() < this.policy.rotationDays * DAY);
        for (const old of current.filter((k) => !fresh.includes(k))) {
          await tx
            .update(oidcSigningKeys)
            .set({ retiredAt: now, expiresAt: new Date(now.getTime() + this.policy.graceDays * DAY) })
            .where(eq(oidcSigningKeys.kid, old.kid));
          retired.push(old.kid);
        }
        if (fresh.length > 0) continue;
        const jwk = generateSigningJwk(alg);
        await tx.insert(oidcSigningKeys).values({ kid: jwk.kid, alg, privateJwkSealed: this.box.encrypt(JSON.stringify(jwk), sealContext(jwk.kid)), createdAt: now });
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
    const now = this.clock.now();
    const rows = await this.db
      .select({ kid: oidcSigningKeys.kid, sealed: oidcSigningKeys.privateJwkSealed, retiredAt: oidcSigningKeys.retiredAt })
      .from(oidcSigningKeys)
      .where(or(isNull(oidcSigningKeys.retiredAt), gt(oidcSigningKeys.expiresAt, now)))
      .orderBy(sql`${oidcSigningKeys.retiredAt} is not null`, desc(oidcSigningKeys.createdAt));
    return {
      version: rows.map((r) => `${r.kid}:${r.retiredAt ? "r" : "a"}`).join(","),
      keys: rows.map((r) => JSON.parse(this.box.decryptString(r.sealed, sealContext(r.kid))) as PrivateJwk),
    };
  }

  /** Drops keys past their grace period (nothing they signed is still valid). */
  async deleteExpired(): Promise<number> {
    const result = await this.db.execute(sql`delete from oidc_signing_keys where expires_at is not null and expires_at < ${this.clock.now().toISOString()}::timestamptz returning kid`);
    return resultRows(result).length;
  }
}
