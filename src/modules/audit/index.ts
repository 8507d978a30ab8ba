import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { Metrics } from "../../infra/metrics.js";
import { auditMetricsObserver } from "./audit-metrics.js";
import { ActivityService } from "./activity.service.js";
import { AuditService } from "./audit.service.js";

export { AuditAction, type AuditActionName } from "./audit.actions.js";
export type { AuditDetails, AuditEntryView, AuditService } from "./audit.service.js";
export type { ActivityService } from "./activity.service.js";

/** The audit log: records written inside business transactions, and organization activity. */
export function createAuditModule(deps: { db: Db; clock: Clock; metrics?: Metrics }) {
  return { audit: new AuditService(deps.clock, deps.metrics && auditMetricsObserver(deps.metrics)), activity: new ActivityService(deps.db) };
}

export type AuditModule = ReturnType<typeof createAuditModule>;
