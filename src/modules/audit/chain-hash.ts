import { sha256Hex } from "../../lib/crypto/index.js";

/** The link before a chain's first record. */
export const GENESIS = "0".repeat(64);

/** The chain of every record, beside one chain per organization (named by its id). */
export const GLOBAL_CHAIN = "global";

/** A record's immutable fields: what its chain hashes cover. */
export interface ChainRecord {
  id: string;
  createdAt: Date;
  action: string;
  actorId: string | null;
  userId: string | null;
  organizationId: string | null;
  resourceType: string | null;
  resourceId: string | null;
  success: boolean;
  ipAddress: string | null;
  userAgent: string | null;
  requestId: string | null;
  metadata: Record<string, unknown>;
  errorMessage: string | null;
}

/** JSON with object keys sorted at every level: jsonb reorders keys, so the stored order is no order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The canonical serialization of a record at a place in a chain (chain name and sequence included). */
export const serializeLink = (chain: string, seq: number, r: ChainRecord): string =>
  canonicalJson([
    "keyward-audit/v1", chain, seq, r.id, r.createdAt.toISOString(), r.action, r.actorId, r.userId, r.organizationId,
    r.resourceType, r.resourceId, r.success, r.ipAddress, r.userAgent, r.requestId, r.metadata, r.errorMessage,
  ]);

/** hash = SHA-256(prev_hash || "\n" || canonical serialization), hex. */
export const linkHash = (chain: string, seq: number, prevHash: string, r: ChainRecord): string => sha256Hex(`${prevHash}\n${serializeLink(chain, seq, r)}`);

/** A signed statement about a chain: its head (last chained record) or its base (last pruned record). */
export interface Anchor {
  chain: string;
  kind: "head" | "base";
  seq: number;
  hash: string;
  signedAt: Date;
  keyId: string;
  signature: string;
}

/** The exact bytes an anchor's signature covers. */
export const anchorMessage = (a: Pick<Anchor, "chain" | "kind" | "seq" | "hash" | "signedAt">): string =>
  `keyward-audit-anchor/v1\n${a.kind}\n${a.chain}\n${a.seq}\n${a.hash}\n${a.signedAt.toISOString()}`;
