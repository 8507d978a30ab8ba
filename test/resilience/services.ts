import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { promisify } from "node:util";

/**
 * The machine's PostgreSQL and Redis, stopped and started by the resilience tests (as root, with
 * pg_ctlcluster, as CI runs them). Whatever a test does, `restoreServices` leaves both running.
 *
 * Every command runs asynchronously, never with execFileSync: the load a test drives runs in this
 * same event loop. `pg_ctlcluster start` takes 2 s or more on a busy machine, and an event loop
 * frozen that long reads neither the answers that arrive nor the FIN of a keep-alive connection
 * Keyward closed as idle (HTTP_KEEP_ALIVE_TIMEOUT, 5 s, plus Node's 1 s buffer), and its own idle
 * timers (3 s after the server's `Keep-Alive: timeout=5`) cannot fire first. Once it thaws, fetch
 * sends the next requests on those closed connections and gets UND_ERR_SOCKET / ECONNRESET: a
 * failure of the frozen client, not of the server (which closed connections idle for 6 s).
 */
const run = promisify(execFile);

export const pgCluster = async (action: "stop" | "start") => {
  await run("pg_ctlcluster", ["--skip-systemctl-redirect", readdirSync("/etc/postgresql")[0]!, "main", action, ...(action === "stop" ? ["-m", "fast"] : [])]);
};

export const pgUp = async () => {
  try {
    await run("pg_isready", ["-h", "127.0.0.1", "-p", "5432", "-q"]);
    return true;
  } catch {
    return false;
  }
};

export const redisUp = async () => {
  try {
    return (await run("redis-cli", ["-h", "127.0.0.1", "-p", "6379", "ping"])).stdout.trim() === "PONG";
  } catch {
    return false;
  }
};

export const startRedis = async () => {
  if (!(await redisUp())) await run("redis-server", ["--daemonize", "yes", "--bind", "127.0.0.1", "--port", "6379", "--save", "", "--appendonly", "no"]);
};

export const stopRedis = async () => {
  try {
    await run("redis-cli", ["-h", "127.0.0.1", "-p", "6379", "shutdown", "nosave"]);
  } catch {
    // redis-cli reports the dropped connection of a shutdown as an error.
  }
};

export const until = async (ok: () => boolean | Promise<boolean>, ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ok()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
};

export async function restoreServices(): Promise<void> {
  if (!(await pgUp())) await pgCluster("start");
  await startRedis();
  await until(async () => (await pgUp()) && (await redisUp()), 30_000);
}
