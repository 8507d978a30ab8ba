import { and, asc, count, desc, eq, gt, inArray, isNotNull, isNull, lte, ne, sql } from "drizzle-orm";
import { auditChainAnchors, auditChainChecks, auditLogs } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import { resultRows, type Executor } from "../../infra/db.js";
import { GLOBAL_CHAIN, type Anchor, type ChainRecord } from "./chain-hash.js";
import type { ChainCheck, ChainReport } from "./chain-report.js";

// Arbitrary constant: one instance at a time chains, signs and prunes.
const CHAIN_LOCK_ID = 7_420_005;

const recordColumns = pickColumns(auditLogs, [
  "id", "createdAt", "action", "actorId", "userId", "organizationId", "resourceType", "resourceId", "success", "ipAddress", "userAgent", "requestId", "metadata", "errorMessage",
]);

/** A record at its place in one chain. */
export interface ChainRow {
  seq: number;
  prevHash: string | null;
  hash: string | null;
  record: ChainRecord;
}

/** What the chain job writes into a record. */
export interface Link {
  id: string;
  seq: number;
  prevHash: string;
  hash: string;
  orgSeq: number | null;
  orgPrevHash: string | null;
  orgHash: string | null;
}

const isGlobal = (chain: string) => chain === GLOBAL_CHAIN;
/** The chain columns of `chain` (global, or an organization's). */
const cols = (chain: string) =>
  isGlobal(chain)
    ? { seq: auditLogs.seq, prevHash: auditLogs.prevHash, hash: auditLogs.hash, where: isNotNull(auditLogs.seq) }
    : { seq: auditLogs.orgSeq, prevHash: auditLogs.orgPrevHash, hash: auditLogs.orgHash, where: and(eq(auditLogs.organizationId, chain), isNotNull(auditLogs.orgSeq)) };

export const chainRepository = {
  /** Held until the transaction ends; false when another instance holds it. */
  async tryLock(tx: Executor): Promise<boolean> {
    const [row] = resultRows<{ locked: boolean }>(await tx.execute(sql`select pg_try_advisory_xact_lock(${CHAIN_LOCK_ID}) as locked`));
    return !!row?.locked;
  },

  /** The oldest unchained records, in insertion order. */
  unchained: async (db: Executor, limit: number): Promise<ChainRecord[]> =>
    (await db.select(recordColumns).from(auditLogs).where(isNull(auditLogs.seq)).orderBy(asc(auditLogs.createdAt), asc(auditLogs.id)).limit(limit)) as ChainRecord[],

  async countUnchained(db: Executor): Promise<number> {
    const [row] = await db.select({ n: count() }).from(auditLogs).where(isNull(auditLogs.seq));
    return row?.n ?? 0;
  },

  /** One statement for a whole batch, its links one JSON parameter: no round trip, and no placeholder, per record. */
  async applyLinks(tx: Executor, links: Link[]): Promise<void> {
    if (links.length === 0) return;
    const rows = JSON.stringify(links.map((l) => ({ id: l.id, seq: l.seq, prev_hash: l.prevHash, hash: l.hash, org_seq: l.orgSeq, org_prev_hash: l.orgPrevHash, org_hash: l.orgHash })));
    await tx.execute(sql`update audit_logs a set seq = v.seq, prev_hash = v.prev_hash, hash = v.hash, org_seq = v.org_seq, org_prev_hash = v.org_prev_hash, org_hash = v.org_hash
      from jsonb_to_recordset(${rows}::jsonb) as v(id uuid, seq bigint, prev_hash varchar, hash varchar, org_seq bigint, org_prev_hash varchar, org_hash varchar)
      where a.id = v.id and a.seq is null`);
  },

  anchors: async (db: Executor, kind: Anchor["kind"], chains?: string[]): Promise<Anchor[]> =>
    (await db
      .select()
      .from(auditChainAnchors)
      .where(chains ? and(eq(auditChainAnchors.kind, kind), inArray(auditChainAnchors.chain, chains)) : eq(auditChainAnchors.kind, kind))) as Anchor[],

  async anchor(db: Executor, chain: string, kind: Anchor["kind"]): Promise<Anchor | undefined> {
    const [row] = await db.select().from(auditChainAnchors).where(and(eq(auditChainAnchors.chain, chain), eq(auditChainAnchors.kind, kind)));
    return row as Anchor | undefined;
  },

  async upsertAnchors(tx: Executor, anchors: Anchor[]): Promise<void> {
    if (anchors.length === 0) return;
    await tx
      .insert(auditChainAnchors)
      .values(anchors)
      .onConflictDoUpdate({
        target: [auditChainAnchors.chain, auditChainAnchors.kind],
        set: { seq: sql`excluded.seq`, hash: sql`excluded.hash`, signedAt: sql`excluded.signed_at`, keyId: sql`excluded.key_id`, signature: sql`excluded.signature` },
      });
  },

  /** Keeps each chain's latest verification (a statement per thousand chains: bind parameters are finite). */
  async saveChecks(db: Executor, checks: ChainCheck[]): Promise<void> {
    for (let i = 0; i < checks.length; i += 1_000) {
      const rows = checks.slice(i, i + 1_000).map(({ checkedAt, ...report }) => ({ chain: report.chain, checkedAt, ok: report.ok, report: report as unknown as Record<string, unknown> }));
      await db
        .insert(auditChainChecks)
        .values(rows)
        .onConflictDoUpdate({ target: auditChainChecks.chain, set: { checkedAt: sql`excluded.checked_at`, ok: sql`excluded.ok`, report: sql`excluded.report` } });
    }
  },

  async lastCheck(db: Executor, chain: string): Promise<ChainCheck | null> {
    const [row] = await db.select().from(auditChainChecks).where(eq(auditChainChecks.chain, chain));
    return row ? { ...(row.report as unknown as ChainReport), checkedAt: row.checkedAt } : null;
  },

  /** Organizations with a chain: anchored ones, and any with chained records (an anchor may have been removed). */
  async organizationChains(db: Executor): Promise<string[]> {
    const rows = resultRows<{ chain: string }>(
      await db.execute(sql`select chain from audit_chain_anchors where chain <> ${GLOBAL_CHAIN}
        union select distinct organization_id::text from audit_logs where org_seq is not null order by 1`),
    );
    return rows.map((r) => r.chain);
  },

  /** Up to `limit` records of a chain after `afterSeq`, in chain order (ties by id). */
  async page(db: Executor, chain: string, afterSeq: number, limit: number, throughSeq?: number): Promise<ChainRow[]> {
    const c = cols(chain);
    const rows = await db
      .select({ ...recordColumns, seq: c.seq, prevHash: c.prevHash, hash: c.hash })
      .from(auditLogs)
      .where(and(c.where, gt(c.seq, afterSeq), throughSeq === undefined ? undefined : lte(c.seq, throughSeq)))
      .orderBy(asc(c.seq), asc(auditLogs.id))
      .limit(limit);
    return rows.map(({ seq, prevHash, hash, ...record }) => ({ seq: seq!, prevHash, hash, record: record as ChainRecord }));
  },

  /** The sequence of the record of `chain` whose hash is `hash`, other than `exceptId` (where a moved record came from). */
  async seqOfHash(db: Executor, chain: string, hash: string, exceptId: string): Promise<number | undefined> {
    const c = cols(chain);
    const [row] = await db.select({ seq: c.seq }).from(auditLogs).where(and(c.where, eq(c.hash, hash), ne(auditLogs.id, exceptId))).limit(1);
    return row?.seq ?? undefined;
  },

  /** The last chained record created before `cutoff` with nothing newer before it: the end of what may be pruned. */
  async pruneEnd(db: Executor, cutoff: Date, maxSeq: number): Promise<{ seq: number; hash: string } | undefined> {
    const [firstKept] = await db.select({ seq: auditLogs.seq }).from(auditLogs).where(and(isNotNull(auditLogs.seq), sql`${auditLogs.createdAt} >= ${cutoff.toISOString()}::timestamptz`)).orderBy(asc(auditLogs.seq)).limit(1);
    const end = Math.min(maxSeq, firstKept?.seq != null ? firstKept.seq - 1 : maxSeq);
    const [row] = await db.select({ seq: auditLogs.seq, hash: auditLogs.hash }).from(auditLogs).where(and(isNotNull(auditLogs.seq), lte(auditLogs.seq, end))).orderBy(desc(auditLogs.seq)).limit(1);
    return row?.seq != null && row.hash ? { seq: row.seq, hash: row.hash } : undefined;
  },

  /** Each organization's last record at or before global `seq`: its chain's new base. */
  organizationEnds: async (db: Executor, throughSeq: number): Promise<Array<{ chain: string; seq: number; hash: string }>> =>
    resultRows<{ chain: string; seq: string | number; hash: string }>(
      await db.execute(sql`select distinct on (organization_id) organization_id::text as chain, org_seq as seq, org_hash as hash from audit_logs
        where seq <= ${throughSeq} and org_seq is not null order by organization_id, org_seq desc`),
    ).map((r) => ({ chain: r.chain, seq: Number(r.seq), hash: r.hash })),

  /** Deletes chained records through global `seq` (the trigger lets a pruning transaction do only that). */
  async deleteThrough(tx: Executor, throughSeq: number): Promise<number> {
    await tx.execute(sql`select set_config('keyward.audit_prune', 'on', true)`);
    const rows = await tx.delete(auditLogs).where(and(isNotNull(auditLogs.seq), lte(auditLogs.seq, throughSeq))).returning({ id: auditLogs.id });
    await tx.execute(sql`select set_config('keyward.audit_prune', 'off', true)`);
    return rows.length;
  },
};
