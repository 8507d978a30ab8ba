import { randomBytes } from "node:crypto";
import { connectPostgres } from "../../src/infra/db.js";
import { withDatabase } from "../helpers/global-setup.js";
import { freePort, startServerProcess, stopServerProcess, untilListening, type ServerProcess } from "../helpers/server-process.js";

/**
 * Keyward instances as separate processes sharing one fresh PostgreSQL database and one Redis key
 * prefix, the way a deployment runs them behind a load balancer.
 */
export interface Instance {
  url: string;
  process: ServerProcess;
}

export interface Cluster {
  env: Record<string, string>;
  /** `port`: the address of an instance that is gone (a restart after a crash keeps its issuer URL). */
  start(extra?: Record<string, string>, port?: number): Promise<Instance>;
  /** Starts one without waiting for it to listen (it may never). */
  spawn(extra?: Record<string, string>, port?: number): Promise<Instance>;
  stop(instance: Instance): Promise<void>;
  close(): Promise<void>;
}

export function requireServices(): { databaseUrl: string; redisUrl: string } {
  const databaseUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!databaseUrl || !redisUrl) throw new Error("the resilience suite runs on PostgreSQL and Redis: set DATABASE_URL and REDIS_URL");
  return { databaseUrl, redisUrl };
}

export async function startCluster(env: Record<string, string> = {}): Promise<Cluster> {
  const { databaseUrl, redisUrl } = requireServices();
  const name = `keyward_res_${process.pid}_${randomBytes(3).toString("hex")}`;
  const admin = connectPostgres(databaseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  const shared = {
    DATABASE_URL: withDatabase(databaseUrl, name),
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `kwres:${name}:`,
    SESSION_SECRET: randomBytes(32).toString("base64"),
    ENCRYPTION_KEYS: `r1:${randomBytes(32).toString("base64")}`,
    // These suites are about outages, not admission: their owners create organizations without first
    // reading an email (invitations are still accepted through their emailed links).
    REQUIRE_VERIFIED_EMAIL: "false",
    ...env,
  };
  const running: Instance[] = [];
  const spawn = async (extra: Record<string, string> = {}, reuse?: number): Promise<Instance> => {
    const port = reuse ?? (await freePort());
    const url = `http://127.0.0.1:${port}`;
    const proc = startServerProcess(["--import", "tsx", "src/main.ts"], { PUBLIC_URL: url, ...shared, ...extra, PORT: String(port), DATA_DIR: "./data" });
    // Kept before any wait, so close() stops it even when it never gets ready.
    const instance = { url, process: proc };
    running.push(instance);
    return instance;
  };
  return {
    env: shared,
    spawn,
    async start(extra = {}, reuse?: number) {
      const instance = await spawn(extra, reuse);
      await untilListening(instance.process);
      return instance;
    },
    async stop(instance) {
      await stopServerProcess(instance.process);
    },
    async close() {
      await Promise.all(running.map((i) => stopServerProcess(i.process)));
      const a = connectPostgres(databaseUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists "${name}" with (force)`);
      await a.end();
    },
  };
}
