import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { Metrics } from "../../infra/metrics.js";
import type { SecretBox } from "../../lib/crypto/index.js";
import { auditMetricsObserver } from "./audit-metrics.js";
import { ActivityService } from "./activity.service.js";
import { AuditService } from "./audit.service.js";
import { ChainExportService } from "./chain-export.service.js";
import { ChainSigner } from "./chain-signer.service.js";
import { ChainVerifyService } from "./chain-verify.service.js";
import { ChainService, type ChainConfig } from "./chain.service.js";

export { AuditAction, type AuditActionName } from "./audit.actions.js";
export type { AuditDetails, AuditEntry, AuditEntryView, AuditService } from "./audit.service.js";
export type { ActivityService } from "./activity.service.js";
export type { ChainBreak, ChainCheck, ChainReport, VerifyReport } from "./chain-verify.service.js";
export type { ChainExport } from "./chain-export.service.js";
export type { ChainService, PruneResult } from "./chain.service.js";

/**
 * The audit log: records written inside business transactions, organization activity, and the
 * tamper-evident hash chains over them (chaining job, verification, export, retention).
 */
export function createAuditModule(deps: { db: Db; clock: Clock; box: SecretBox; chain: ChainConfig; metrics?: Metrics }) {
  const audit = new AuditService(deps.clock, deps.metrics && auditMetricsObserver(deps.metrics));
  const signer = new ChainSigner(deps.box, deps.clock);
  return {
    audit,
    activity: new ActivityService(deps.db),
    auditChain: new ChainService(deps.db, deps.clock, signer, audit, deps.chain),
    auditVerify: new ChainVerifyService(deps.db, deps.clock, signer, audit),
    auditExport: new ChainExportService(deps.db, signer, audit),
  };
}

export type AuditModule = ReturnType<typeof createAuditModule>;
export { auditInsertAs, auditInsertManyAs, auditInsertWhenAs, auditRowsJson, auditRowValues, type AuditRow } from "./audit.repository.js";
export { activitySchema, systemAuditQuerySchema } from "./activity.schemas.js";
export { chainExportSchema } from "./chain-export.service.js";
