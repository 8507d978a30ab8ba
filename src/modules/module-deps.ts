import type { Clock } from "../infra/clock.js";
import type { Db } from "../infra/db.js";
import type { SecretBox } from "../lib/crypto/index.js";
import type { AuditService } from "./audit/index.js";

/** What nearly every module factory takes: the database, the clock and the audit trail. */
export interface CoreDeps {
  db: Db;
  clock: Clock;
  audit: AuditService;
}

/** Modules that seal secrets at rest add the secret box. */
export interface SealingDeps extends CoreDeps {
  box: SecretBox;
}
