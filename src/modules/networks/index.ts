import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import type { SecretBox } from "../../lib/crypto/index.js";
import type { AuditService } from "../audit/index.js";
import type { EmailService } from "../email/index.js";
import { AccessService } from "./access.service.js";
import { ApprovalsService } from "./approvals.service.js";
import { createControllerClient } from "./controller/index.js";
import { ControllerConfigService, type ClientFactory, type ControllerSettings } from "./controller-config.service.js";
import { ControllerSync } from "./controller-sync.js";
import { DevicesService } from "./devices.service.js";
import { GlobalKillSwitchService } from "./global-kill-switch.service.js";
import { NetworkOffboarding } from "./offboarding.js";
import { PortalNetworksService } from "./portal-networks.service.js";
import { ReconcileService } from "./reconcile.service.js";
export { type ClientFactory } from "./controller-config.service.js";
export { type AccountName, globalKillSwitchListSchema, type GlobalKillSwitchPreview, globalKillSwitchSchema, type GlobalKillSwitchView } from "./global-kill-switch.service.js";
export { activateSchema, assignApprovalSchema, controllerConfigSchema, createDeviceSchema, createNetworkSchema, decideSchema, importMembersSchema, importNetworksSchema, killSwitchSchema, listNetworksSchema, managersSchema, pendingQuerySchema, requestApprovalSchema, updateDeviceSchema, updateNetworkSchema } from "./networks.schemas.js";
export { type ApprovalView, type DeviceView, type KillSwitchView, type MembershipView, type PortalNetworkView, type SessionView } from "./networks.views.js";

export interface NetworksModuleDeps {
  db: Db;
  clock: Clock;
  audit: AuditService;
  email: EmailService;
  box: SecretBox;
  logger: Logger;
  config: ControllerSettings & { appUrl: string; reconcileIntervalMs: number; controllerTimeoutMs: number; controllerRetries: number };
  /** Tests and benches may wrap the client (to count calls); production uses the real one. */
  makeClient?: ClientFactory;
}

/** Governed access to ZeroTier networks: one module, one factory (ARCHITECTURE rule 15). */
export function createNetworksModule(deps: NetworksModuleDeps) {
  const { db, clock, audit, email, box, logger, config } = deps;
  const controllers = new ControllerConfigService(db, clock, audit, box, deps.makeClient ?? ((c) => createControllerClient(c, { timeoutMs: config.controllerTimeoutMs, maxRetries: config.controllerRetries })), config);
  const sync = new ControllerSync(db, clock, controllers, logger);
  const core = { db, clock, audit, controllers, sync };
  return {
    networkController: controllers,
    portalNetworks: new PortalNetworksService(core),
    devices: new DevicesService(core),
    networkApprovals: new ApprovalsService({ ...core, email, config: { appUrl: config.appUrl } }),
    networkAccess: new AccessService(core),
    globalKillSwitch: new GlobalKillSwitchService(core),
    networkOffboarding: new NetworkOffboarding(clock, audit, sync),
    networkReconcile: new ReconcileService(db, clock, audit, controllers, logger, { intervalMs: config.reconcileIntervalMs }),
  };
}

export type NetworksModule = ReturnType<typeof createNetworksModule>;
