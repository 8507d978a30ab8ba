import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { systemContext } from "../../lib/request-context.js";
import { AuditAction } from "./audit.actions.js";
import type { AuditService } from "./audit.service.js";
import { GENESIS, GLOBAL_CHAIN, linkHash, recordBody, type Anchor } from "./chain-hash.js";
import { chainRepository, type Link } from "./chain.repository.js";
import type { ChainSigner } from "./chain-signer.service.js";

export interface ChainConfig {
  /** Records chained per transaction. */
  batchSize: number;
  /** Records older than this many days are pruned (0: kept forever). */
  retentionDays: number;
}

export interface PruneResult {
  pruned: number;
  throughSeq: number | null;
}

const DAY_MS = 86_400_000;
// A tick chains at most this many batches, so one instance's pass cannot run unbounded.
const MAX_BATCHES_PER_TICK = 20;
// Records hashed between two turns of the event loop (about a millisecond of work).
const HASH_SLICE = 50;
// Records deleted per pruning transaction, each preceded by its signed checkpoint.
const PRUNE_STEP = 5_000;

/**
 * Gives unchained records their place in the global chain and their organization's, in insertion
 * order, batch by batch under one advisory lock (one instance at a time, none of them on the insert
 * path), and signs each chain's new head in the same transaction. Pruning past the retention first
 * writes a signed base checkpoint (seq and hash of the last pruned record of every chain touched),
 * then deletes, so verification starts from the checkpoint.
 */
export class ChainService {
  private lastPrune = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly signer: ChainSigner,
    private readonly audit: AuditService,
    private readonly config: ChainConfig,
  ) {}

  /** The scheduled pass: chain what is pending, then prune at most hourly. */
  async tick(): Promise<{ chained: number; pruned: number }> {
    let chained = 0;
    for (let i = 0; i < MAX_BATCHES_PER_TICK; i++) {
      const n = await this.chainBatch();
      chained += n;
      if (n < this.config.batchSize) break;
    }
    let pruned = 0;
    if (this.config.retentionDays > 0 && this.clock.now().getTime() - this.lastPrune >= 3_600_000) {
      pruned = (await this.prune(systemContext("audit-retention"))).pruned;
      this.lastPrune = this.clock.now().getTime();
    }
    return { chained, pruned };
  }

  /** Chains everything pending (tests and the verify task call it before checking). */
  async chainAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.chainBatch();
      total += n;
      if (n < this.config.batchSize) return total;
    }
  }

  /** One batch in one transaction; 0 when another instance holds the lock or nothing is pending. */
  async chainBatch(): Promise<number> {
    return this.guarded(async (tx) => {
      if (!(await chainRepository.tryLock(tx))) return 0;
      const records = await chainRepository.unchained(tx, this.config.batchSize);
      if (records.length === 0) return 0;
      const orgIds = [...new Set(records.map((r) => r.organizationId).filter((id): id is string => !!id))];
      const heads = new Map((await chainRepository.anchors(tx, "head", [GLOBAL_CHAIN, ...orgIds])).map((a) => [a.chain, { seq: a.seq, hash: a.hash }]));
      const at = (chain: string) => heads.get(chain) ?? { seq: 0, hash: GENESIS };
      const links: Link[] = [];
      for (const [i, r] of records.entries()) {
        // A batch is hashed in slices, the event loop free between them: requests in flight are
        // not held up for a whole batch.
        if (i > 0 && i % HASH_SLICE === 0) await new Promise(setImmediate);
        const body = recordBody(r);
        const g = at(GLOBAL_CHAIN);
        const link: Link = { id: r.id, seq: g.seq + 1, prevHash: g.hash, hash: linkHash(GLOBAL_CHAIN, g.seq + 1, g.hash, r, body), orgSeq: null, orgPrevHash: null, orgHash: null };
        heads.set(GLOBAL_CHAIN, { seq: link.seq, hash: link.hash });
        if (r.organizationId) {
          const o = at(r.organizationId);
          Object.assign(link, { orgSeq: o.seq + 1, orgPrevHash: o.hash, orgHash: linkHash(r.organizationId, o.seq + 1, o.hash, r, body) });
          heads.set(r.organizationId, { seq: link.orgSeq!, hash: link.orgHash! });
        }
        links.push(link);
      }
      await chainRepository.applyLinks(tx, links);
      const signed: Anchor[] = [];
      for (const chain of [GLOBAL_CHAIN, ...orgIds]) signed.push(await this.signer.sign(tx, { chain, kind: "head", ...at(chain) }));
      await chainRepository.upsertAnchors(tx, signed);
      return records.length;
    });
  }

  /** Deletes chained records older than the retention, behind signed base checkpoints; audited. */
  async prune(ctx: Parameters<AuditService["record"]>[1], retentionDays = this.config.retentionDays): Promise<PruneResult> {
    const cutoff = new Date(this.clock.now().getTime() - retentionDays * DAY_MS);
    let pruned = 0;
    let throughSeq: number | null = null;
    for (;;) {
      const step = await this.guarded(async (tx) => {
        if (!(await chainRepository.tryLock(tx))) return null;
        const base = (await chainRepository.anchor(tx, GLOBAL_CHAIN, "base"))?.seq ?? 0;
        const end = await chainRepository.pruneEnd(tx, cutoff, base + PRUNE_STEP);
        if (!end || end.seq <= base) return null;
        const ends = [{ chain: GLOBAL_CHAIN, ...end }, ...(await chainRepository.organizationEnds(tx, end.seq))];
        const anchors: Anchor[] = [];
        for (const e of ends) anchors.push(await this.signer.sign(tx, { kind: "base", ...e }));
        // The checkpoint first: verification must never miss where the remaining chain starts.
        await chainRepository.upsertAnchors(tx, anchors);
        return { deleted: await chainRepository.deleteThrough(tx, end.seq), seq: end.seq };
      });
      if (!step) break;
      pruned += step.deleted;
      throughSeq = step.seq;
    }
    // A pass with nothing past the retention changed nothing: only actual pruning is recorded.
    if (pruned > 0) await this.audit.record(this.db, ctx, AuditAction.auditPruned, { metadata: { retention_days: retentionDays, cutoff: cutoff.toISOString(), pruned, through_seq: throughSeq } });
    return { pruned, throughSeq };
  }

  private async guarded<T>(fn: (tx: Executor) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction(fn);
    } catch (e) {
      this.signer.forget();
      throw e;
    }
  }
}
