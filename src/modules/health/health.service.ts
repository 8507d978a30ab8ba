import type { Database } from "../../infra/db.js";

export const SERVICE_NAME = "keyward";

export interface Pingable {
  ping(): Promise<unknown>;
}

/** Liveness (the process answers) and readiness (its database and Redis answer). */
export class HealthService {
  constructor(
    private readonly version: string,
    private readonly database: Database,
    private readonly redis: Pingable | undefined,
  ) {}

  health() {
    return { status: "healthy", service: SERVICE_NAME, version: this.version };
  }

  async readiness() {
    const check = async (fn: () => Promise<unknown>) => {
      try {
        await withTimeout(fn(), 2000);
        return "ok" as const;
      } catch {
        return "unavailable" as const;
      }
    };
    const checks = {
      database: await check(() => this.database.ping()),
      redis: this.redis ? await check(() => this.redis!.ping()) : ("in-process" as const),
    };
    const ready = Object.values(checks).every((v) => v !== "unavailable");
    return { ready, service: SERVICE_NAME, version: this.version, checks };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("timeout")), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
