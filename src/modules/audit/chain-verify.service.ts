import type { Db } from "../../infra/db.js";
import type { Clock } from "../../infra/clock.js";
import type { RequestContext } from "../../lib/request-context.js";
import { requireSuperadmin } from "../auth/guards.js";
import { AuditAction } from "./audit.actions.js";
import type { AuditService } from "./audit.service.js";
import { GLOBAL_CHAIN } from "./chain-hash.js";
import { chainRepository } from "./chain.repository.js";
import type { ChainSigner } from "./chain-signer.service.js";
import { walkChain, type ChainBreak, type ChainReport } from "./chain-walk.js";

export type { ChainBreak, ChainReport } from "./chain-walk.js";

export interface VerifyReport {
  ok: boolean;
  checkedAt: Date;
  global: ChainReport;
  organizationsChecked: number;
  /** Organizations whose chain is broken (each with its first broken link). */
  brokenOrganizations: ChainReport[];
  /** The first broken link: the global chain's, else the first broken organization's. */
  firstBreak: ChainBreak | null;
  /** Records written since the last chain pass: not yet covered. */
  unchained: number;
}

/**
 * Verifies the global chain and every organization's from their signed checkpoints to their signed
 * heads, on one snapshot (a repeatable-read transaction, so the chain job running meanwhile is not
 * mistaken for tampering). Superadmins over HTTP; operators through `npm run audit:verify`.
 */
export class ChainVerifyService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly signer: ChainSigner,
    private readonly audit: AuditService,
  ) {}

  async verify(ctx: RequestContext): Promise<VerifyReport> {
    // Only operators of the installation: the global chain spans every organization.
    requireSuperadmin(ctx);
    return this.verifyAsOperator(ctx);
  }

  /** Without an authorization check: for operator tasks beside the service (src/tasks). */
  async verifyAsOperator(ctx: RequestContext): Promise<VerifyReport> {
    const report = await this.db.transaction(
      async (tx) => {
        const check = this.signer.verifier(tx);
        const [heads, bases] = await Promise.all([chainRepository.anchors(tx, "head"), chainRepository.anchors(tx, "base")]);
        const anchorsOf = (chain: string) => ({ head: heads.find((a) => a.chain === chain), base: bases.find((a) => a.chain === chain) });
        const global = await walkChain(tx, GLOBAL_CHAIN, anchorsOf(GLOBAL_CHAIN), check);
        const orgs = await chainRepository.organizationChains(tx);
        const brokenOrganizations: ChainReport[] = [];
        for (const chain of orgs) {
          const r = await walkChain(tx, chain, anchorsOf(chain), check);
          if (!r.ok) brokenOrganizations.push(r);
        }
        const firstBreak = global.break ?? brokenOrganizations[0]?.break ?? null;
        const unchained = await chainRepository.countUnchained(tx);
        return { ok: !firstBreak, checkedAt: this.clock.now(), global, organizationsChecked: orgs.length, brokenOrganizations, firstBreak, unchained };
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
    const first = report.firstBreak;
    await this.audit.record(this.db, ctx, AuditAction.auditVerified, {
      success: report.ok,
      metadata: { ok: report.ok, head_seq: report.global.headSeq, organizations: report.organizationsChecked, unchained: report.unchained, ...(first ? { first_break: { chain: first.chain, kind: first.kind, seq: first.seq, record_id: first.recordId } } : {}) },
    });
    return report;
  }
}
