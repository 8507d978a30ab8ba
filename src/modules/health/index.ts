import type { Database } from "../../infra/db.js";
import { HealthService, type Pingable } from "./health.service.js";

export { SERVICE_NAME, type HealthService, type Pingable } from "./health.service.js";

/** Liveness and readiness. */
export function createHealthModule(deps: { version: string; database: Database; redis?: Pingable }) {
  return { health: new HealthService(deps.version, deps.database, deps.redis) };
}

export type HealthModule = ReturnType<typeof createHealthModule>;
