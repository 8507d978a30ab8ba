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
  if (value === null || typeof value !== "object") return JSON.stringify(value ?? null);
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i ? "," : "") + canonicalJson(value[i]);
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  let out = "{";
  for (const k of Object.keys(object).sort()) {
    if (object[k] === undefined) continue;
    out += `${out.length > 1 ? "," : ""}${JSON.stringify(k)}:${canonicalJson(object[k])}`;
  }
  return `${out}}`;
}

/**
 * A record's immutable fields, serialized: the part of its link that is the same in each chain it
 * is in (the global one and its organization's), so the chain job serializes a record once.
 */
export const recordBody = (r: ChainRecord): string =>
  [
    r.id, r.createdAt.toISOString(), r.action, r.actorId, r.userId, r.organizationId, r.resourceType, r.resourceId, r.success,
    r.ipAddress, r.userAgent, r.requestId,
  ]
    .map((v) => JSON.stringify(v ?? null))
    .concat(canonicalJson(r.metadata), JSON.stringify(r.errorMessage ?? null))
    .join(",");

/**
 * The canonical serialization of a record at a place in a chain (chain name and sequence included):
 * the canonical JSON array ["keyward-audit/v1", chain, seq, id, created_at, action, actor, user,
 * organization, resource type, resource id, success, ip, user agent, request id, metadata, error].
 */
export const serializeLink = (chain: string, seq: number, r: ChainRecord, body = recordBody(r)): string =>
  `["keyward-audit/v1",${JSON.stringify(chain)},${JSON.stringify(seq)},${body}]`;

/** hash = SHA-256(prev_hash || "\n" || canonical serialization), hex. `body`: the record's `recordBody`, when already made. */
export const linkHash = (chain: string, seq: number, prevHash: string, r: ChainRecord, body?: string): string =>
  sha256Hex(`${prevHash}\n${serializeLink(chain, seq, r, body)}`);

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
