import type { Executor } from "../../infra/db.js";
import { GENESIS, linkHash, type Anchor } from "./chain-hash.js";
import { chainRepository, type ChainRow } from "./chain.repository.js";
import type { BreakKind, ChainBreak, ChainReport } from "./chain-report.js";


const PAGE = 1_000;
type CheckAnchor = (a: Anchor) => Promise<string | null>;

/** The rows of one page with equal sequence numbers together (duplicates are kept whole). */
function groups(rows: ChainRow[]): ChainRow[][] {
  const out: ChainRow[][] = [];
  for (const r of rows) {
    const last = out.at(-1);
    if (last && last[0]!.seq === r.seq) last.push(r);
    else out.push([r]);
  }
  return out;
}

/**
 * Walks one chain from its signed base (or genesis) to its signed head, recomputing every hash,
 * and names the first broken link. A record at its expected place that does not hash to its own
 * hash was edited; a gap in sequence numbers is a deletion; two records with one sequence number,
 * or a record beyond the signed head, an insertion; a record that links to one found later in the
 * chain was reordered.
 */
export async function walkChain(db: Executor, chain: string, anchors: { head?: Anchor; base?: Anchor }, checkAnchor: CheckAnchor): Promise<ChainReport> {
  const fromSeq = anchors.base?.seq ?? 0;
  const report = (records: number, b: ChainBreak | null): ChainReport => ({ chain, ok: !b, fromSeq, headSeq: anchors.head?.seq ?? 0, records, break: b });
  const brk = (kind: BreakKind, seq: number, recordId: string | null, detail: string): ChainBreak => ({ chain, kind, seq, recordId, detail });

  for (const a of [anchors.base, anchors.head]) {
    const wrong = a && (await checkAnchor(a));
    if (wrong) return report(0, brk("bad_signature", a.seq, null, wrong));
  }
  let prev = { seq: fromSeq, hash: anchors.base?.hash ?? GENESIS };
  let records = 0;
  for (;;) {
    const rows = await chainRepository.page(db, chain, prev.seq, PAGE);
    // A page ending inside a group of equal sequence numbers is cut before it (unless it is all one group).
    const all = groups(rows);
    const whole = rows.length < PAGE || all.length === 1 ? all : all.slice(0, -1);
    for (const group of whole) {
      const [first] = group;
      const fits = (r: ChainRow) => r.prevHash === prev.hash && r.hash === linkHash(chain, r.seq, r.prevHash, r.record);
      if (group.length > 1) {
        const intruder = group.find((r) => !fits(r)) ?? group[1]!;
        return report(records, brk("inserted", first!.seq, intruder.record.id, `${group.length} records share sequence ${first!.seq}; record ${intruder.record.id} does not belong`));
      }
      const r = first!;
      if (r.seq > prev.seq + 1) {
        const missing = r.seq - 1 === prev.seq + 1 ? `record ${prev.seq + 1} is` : `records ${prev.seq + 1}..${r.seq - 1} are`;
        return report(records, brk("deleted", prev.seq + 1, r.record.id, `${missing} missing before record ${r.record.id} (seq ${r.seq})`));
      }
      const selfConsistent = !!r.prevHash && r.hash === linkHash(chain, r.seq, r.prevHash, r.record);
      if (!selfConsistent || r.prevHash !== prev.hash) {
        const linkedTo = r.prevHash && r.prevHash !== prev.hash ? await chainRepository.seqOfHash(db, chain, r.prevHash, r.record.id) : undefined;
        if (linkedTo !== undefined && linkedTo >= r.seq) return report(records, brk("reordered", r.seq, r.record.id, `record ${r.record.id} at seq ${r.seq} follows the record now at seq ${linkedTo}: records were reordered`));
        if (linkedTo !== undefined && linkedTo < r.seq - 1) return report(records, brk("inserted", r.seq - 1, r.record.id, `record ${r.record.id} at seq ${r.seq} followed seq ${linkedTo}: records were inserted before it`));
        const what = selfConsistent ? "does not link to the record before it" : "does not match its hash: its fields or chain columns were changed";
        return report(records, brk("edited", r.seq, r.record.id, `record ${r.record.id} at seq ${r.seq} ${what}`));
      }
      prev = { seq: r.seq, hash: r.hash! };
      records++;
    }
    if (rows.length < PAGE) break;
  }
  const head = anchors.head ?? { seq: fromSeq, hash: anchors.base?.hash ?? GENESIS };
  if (prev.seq < head.seq) return report(records, brk("deleted", prev.seq + 1, null, `the signed head is seq ${head.seq} but the chain ends at seq ${prev.seq}: records were deleted`));
  if (prev.seq > head.seq) return report(records, brk("inserted", head.seq + 1, null, `records after the signed head (seq ${head.seq}) were added outside the chain job`));
  if (prev.hash !== head.hash) return report(records, brk("edited", prev.seq, null, `the last record's hash differs from the signed head's`));
  return report(records, null);
}
