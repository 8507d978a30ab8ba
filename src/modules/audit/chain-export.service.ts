import { z } from "zod";
import type { Db, Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction } from "./audit.actions.js";
import type { AuditService } from "./audit.service.js";
import { GENESIS, GLOBAL_CHAIN, type Anchor } from "./chain-hash.js";
import { chainRepository, type ChainRow } from "./chain.repository.js";
import type { ChainSigner } from "./chain-signer.service.js";
import { requireOrgAccess, requireSuperadmin } from "../access/index.js";

export const chainExportSchema = z.object({
  format: z.enum(["jsonl", "csv"]).default("jsonl"),
  /** Superadmins: one organization's chain instead of the global one. */
  organizationId: z.uuid().optional(),
});
export type ChainExportInput = z.input<typeof chainExportSchema>;

export interface ChainExport {
  filename: string;
  contentType: string;
  /** The file, line by line, read a page at a time (never whole in memory). */
  lines: AsyncIterable<string>;
}

const PAGE = 1_000;
const FIELDS = ["type", "chain", "seq", "prev_hash", "hash", "id", "created_at", "action", "actor_id", "user_id", "organization_id", "resource_type", "resource_id", "success", "ip_address", "user_agent", "request_id", "metadata", "error_message", "key_id", "signature", "public_key"] as const;
type Line = Partial<Record<(typeof FIELDS)[number], unknown>>;

/**
 * OWASP's CSV injection rule: a spreadsheet runs a cell that starts with =, +, -, @, a tab or a
 * carriage return as a formula, and user_agent, metadata and error messages are callers' own text.
 * Such a cell gets a leading apostrophe, so it opens as text. To keep the export exact (and the
 * chain recomputable from it), a cell that already starts with an apostrophe gets one too: in the
 * CSV, a cell starting with ' is its value with that first character added, nothing else is.
 * JSON lines carry every value untouched.
 */
const FORMULA_START = /^[=+\-@\t\r']/;

const csvCell = (v: unknown): string => {
  if (v === null || v === undefined) return "";
  const text = typeof v === "object" ? JSON.stringify(v) : String(v);
  const s = FORMULA_START.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

const anchorLine = (a: Anchor, publicKey: string | null): Line => ({ type: a.kind, chain: a.chain, seq: a.seq, hash: a.hash, created_at: a.signedAt.toISOString(), key_id: a.keyId, signature: a.signature, public_key: publicKey });

const recordLine = (chain: string, r: ChainRow): Line => ({
  type: "record", chain, seq: r.seq, prev_hash: r.prevHash, hash: r.hash, id: r.record.id, created_at: r.record.createdAt.toISOString(), action: r.record.action,
  actor_id: r.record.actorId, user_id: r.record.userId, organization_id: r.record.organizationId, resource_type: r.record.resourceType, resource_id: r.record.resourceId,
  success: r.record.success, ip_address: r.record.ipAddress, user_agent: r.record.userAgent, request_id: r.record.requestId, metadata: r.record.metadata, error_message: r.record.errorMessage,
});

/**
 * A chain as JSON lines or CSV: the signed base checkpoint (if pruned) and head first, then every
 * record from the base to that head with its seq, prev_hash and hash, so an auditor can recompute
 * the chain and check the head's Ed25519 signature with the public key given. The global chain is
 * for superadmins; an organization's admins export their own organization's chain.
 */
export class ChainExportService {
  constructor(
    private readonly db: Db,
    private readonly signer: ChainSigner,
    private readonly audit: AuditService,
  ) {}

  async exportChain(ctx: RequestContext, input: ChainExportInput): Promise<ChainExport> {
    const q = parseInput(chainExportSchema, input);
    requireSuperadmin(ctx);
    return this.open(ctx, q.organizationId ?? GLOBAL_CHAIN, q.format);
  }

  async exportOrganization(ctx: RequestContext, orgId: string, input: Pick<ChainExportInput, "format">): Promise<ChainExport> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "activity.read");
    return this.open(ctx, id, parseInput(chainExportSchema.pick({ format: true }), input).format);
  }

  private async open(ctx: RequestContext, chain: string, format: "jsonl" | "csv"): Promise<ChainExport> {
    const [head, base] = await Promise.all([chainRepository.anchor(this.db, chain, "head"), chainRepository.anchor(this.db, chain, "base")]);
    await this.audit.record(this.db, ctx, AuditAction.auditExported, {
      organizationId: chain === GLOBAL_CHAIN ? null : chain,
      metadata: { chain, format, head_seq: head?.seq ?? 0 },
    });
    const render = format === "csv" ? (l: Line) => `${FIELDS.map((f) => csvCell(l[f])).join(",")}\r\n` : (l: Line) => `${JSON.stringify(l)}\n`;
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    return {
      filename: `audit-${chain === GLOBAL_CHAIN ? "global" : `org-${chain}`}-${stamp}.${format}`,
      contentType: format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson",
      lines: this.lines(this.db, chain, head, base, format === "csv" ? `${FIELDS.join(",")}\r\n` : null, render),
    };
  }

  private async *lines(db: Executor, chain: string, head: Anchor | undefined, base: Anchor | undefined, header: string | null, render: (l: Line) => string): AsyncGenerator<string> {
    if (header) yield header;
    for (const a of [base, head]) if (a) yield render(anchorLine(a, await this.signer.publicKey(db, a.keyId)));
    // Up to the head read above: records chained while exporting belong to a later head.
    let after = base?.seq ?? 0;
    const through = head?.seq ?? 0;
    while (after < through) {
      const rows = await chainRepository.page(db, chain, after, PAGE, through);
      if (rows.length === 0) break;
      for (const r of rows) yield render(recordLine(chain, r));
      after = rows.at(-1)!.seq;
    }
    if (!head) yield render({ type: "head", chain, seq: 0, hash: GENESIS });
  }
}
