import type { Db } from "../../infra/db.js";
import type { SecretBox } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import type { AuditService } from "../audit/index.js";
import { SEALED_KINDS, sealedValuesRepository, type SealedKindName } from "./sealed-values.repository.js";
import { sealedValuesSecretsRepository } from "./sealed-values.secrets.repository.js";

export type { SealedKindName };

export interface SealedKindReport {
  kind: SealedKindName;
  /** The key id new values of this kind are sealed under. */
  currentKeyId: string;
  /** How many values each key id seals. */
  byKey: Record<string, number>;
  /** Values still under an older key. */
  stale: number;
}

export interface ResealResult {
  resealed: Partial<Record<SealedKindName, number>>;
  report: SealedKindReport[];
}

/**
 * Key rotation without downtime: after a new key is put first in ENCRYPTION_KEYS (or
 * CA_KEY_ENCRYPTION_KEY) and every instance restarted, `reseal` re-encrypts every value still sealed
 * under an older key, in small batches, each value replaced only if unchanged since it was read.
 * Stopping at any point loses nothing (every value opens under the old or the new key), and running
 * it again carries on; when the report shows no stale value the old key can be removed.
 */
export class ResealService {
  constructor(
    private readonly db: Db,
    private readonly boxes: { data: SecretBox; ca: SecretBox },
    private readonly audit: AuditService,
  ) {}

  async report(): Promise<SealedKindReport[]> {
    const out: SealedKindReport[] = [];
    for (const kind of Object.keys(SEALED_KINDS) as SealedKindName[]) {
      const currentKeyId = this.boxes[SEALED_KINDS[kind].box].currentKeyId;
      const byKey = await sealedValuesRepository.countByKey(this.db, kind);
      const stale = Object.entries(byKey).reduce((n, [id, count]) => (id === currentKeyId ? n : n + count), 0);
      out.push({ kind, currentKeyId, byKey, stale });
    }
    return out;
  }

  async reseal(ctx: RequestContext, options: { batchSize?: number; onBatch?: (kind: SealedKindName, done: number) => void } = {}): Promise<ResealResult> {
    const batchSize = options.batchSize ?? 200;
    const resealed: ResealResult["resealed"] = {};
    for (const kind of Object.keys(SEALED_KINDS) as SealedKindName[]) {
      const { box: boxName, context } = SEALED_KINDS[kind];
      const box = this.boxes[boxName];
      let done = 0;
      for (;;) {
        const batch = await sealedValuesSecretsRepository.staleBatch(this.db, kind, box.currentKeyId, batchSize);
        if (batch.length === 0) break;
        let replaced = 0;
        for (const value of batch) {
          // Opening fails loudly (SealedValueError names the key) rather than skipping a value.
          const ctxText = context(value.keys);
          const fresh = box.encrypt(box.decrypt(value.sealed, ctxText), ctxText);
          if (await sealedValuesRepository.replace(this.db, kind, value, fresh)) replaced++;
        }
        done += replaced;
        options.onBatch?.(kind, done);
        // Values changed under us were re-sealed by their writer, under the current key.
        if (replaced === 0) break;
      }
      if (done > 0) resealed[kind] = done;
    }
    const report = await this.report();
    await this.audit.record(this.db, ctx, "keys.resealed", { metadata: { resealed, stale: Object.fromEntries(report.map((r) => [r.kind, r.stale])) } });
    return { resealed, report };
  }
}
