/** What verifying an audit chain finds (chain-walk.ts walks, chain.repository.ts keeps the latest). */

/** What is wrong at the first broken link of a chain. */
export type BreakKind = "edited" | "deleted" | "inserted" | "reordered" | "bad_signature";

export interface ChainBreak {
  chain: string;
  kind: BreakKind;
  /** The sequence number where the chain breaks, and the record found there (null: none). */
  seq: number;
  recordId: string | null;
  detail: string;
}

export interface ChainReport {
  chain: string;
  ok: boolean;
  /** Verified from this sequence (a pruning checkpoint; 0 from the start) to the signed head. */
  fromSeq: number;
  headSeq: number;
  records: number;
  break: ChainBreak | null;
}

/** A chain's report as of when it was verified (the latest is kept: chainRepository.saveChecks). */
export interface ChainCheck extends ChainReport {
  checkedAt: Date;
}
