import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { AuditService } from "../audit/index.js";
import type { ControllerConfigService } from "./controller-config.service.js";
import type { ControllerSync } from "./controller-sync.js";

/**
 * What the networks services stand on, built once by createNetworksModule: the database, the
 * clock, the audit log, the organizations' controller connections, and the sync that applies a
 * committed change at the controller. Each service takes the part it uses.
 */
export interface NetworksCore {
  db: Db;
  clock: Clock;
  audit: AuditService;
  controllers: ControllerConfigService;
  sync: ControllerSync;
}
