import type { Db } from "../../infra/db.js";
import type { Clock } from "../../infra/clock.js";
import type { RequestContext } from "../../lib/request-context.js";
import { AuditAction } from "./audit.actions.js";
import type { AuditService } from "./audit.service.js";
import { GLOBAL_CHAIN } from "./chain-hash.js";
import { chainRepository } from "./chain.repository.js";
import type { ChainSigner } from "./chain-signer.service.js";
import { walkChain } from "./chain-walk.js";
import type { ChainBreak, ChainCheck, ChainReport } from "./chain-report.js";
import { requireOrgAccess, requireSuperadmin } from "../access/index.js";

export type { ChainBreak, ChainCheck, ChainReport } from "./chain-report.js";

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
        const organizations: ChainReport[] = [];
        for (const chain of orgs) organizations.push(await walkChain(tx, chain, anchorsOf(chain), check));
        const brokenOrganizations = organizations.filter((r) => !r.ok);
        const firstBreak = global.break ?? brokenOrganizations[0]?.break ?? null;
        const unchained = await chainRepository.countUnchained(tx);
        return { ok: !firstBreak, checkedAt: this.clock.now(), global, organizationsChecked: orgs.length, brokenOrganizations, firstBreak, unchained, organizations };
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
    const { organizations, ...verified } = report;
    const first = report.firstBreak;
    await this.db.transaction(async (tx) => {
      // Each organization's admins see this outcome for their chain (organizationCheck).
      await chainRepository.saveChecks(tx, [report.global, ...organizations].map((r) => ({ ...r, checkedAt: report.checkedAt })));
      await this.audit.record(tx, ctx, AuditAction.auditVerified, {
        success: report.ok,
        metadata: { ok: report.ok, head_seq: report.global.headSeq, organizations: report.organizationsChecked, unchained: report.unchained, ...(first ? { first_break: breakMetadata(first) } : {}) },
      });
    });
    return verified;
  }

  /**
   * An organization's admins verify their organization's chain, from its signed checkpoint to its
   * signed head, with the signatures on both; the outcome is kept for their home screen.
   */
  async verifyOrganization(ctx: RequestContext, orgId: string): Promise<ChainCheck> {
    const { orgId: chain } = await requireOrgAccess(this.db, ctx, orgId, "activity.read");
    const report = await this.db.transaction(
      async (tx) => {
        const [head, base] = await Promise.all([chainRepository.anchor(tx, chain, "head"), chainRepository.anchor(tx, chain, "base")]);
        return walkChain(tx, chain, { head, base }, this.signer.verifier(tx));
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
    const checked: ChainCheck = { ...report, checkedAt: this.clock.now() };
    await this.db.transaction(async (tx) => {
      await chainRepository.saveChecks(tx, [checked]);
      await this.audit.record(tx, ctx, AuditAction.auditVerified, {
        organizationId: chain,
        success: report.ok,
        metadata: { ok: report.ok, chain, head_seq: report.headSeq, records: report.records, ...(report.break ? { first_break: breakMetadata(report.break) } : {}) },
      });
    });
    return checked;
  }

  /** The latest verification of an organization's chain (by its admins or an operator), null before the first. */
  async organizationCheck(ctx: RequestContext, orgId: string): Promise<ChainCheck | null> {
    const { orgId: chain } = await requireOrgAccess(this.db, ctx, orgId, "activity.read");
    return chainRepository.lastCheck(this.db, chain);
  }
}

const breakMetadata = (b: ChainBreak) => ({ chain: b.chain, kind: b.kind, seq: b.seq, record_id: b.recordId });
