import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";

/**
 * The machine's PostgreSQL and Redis, stopped and started by the resilience tests (as root, with
 * pg_ctlcluster, as CI runs them). Whatever a test does, `restoreServices` leaves both running.
 */
export const pgCluster = (action: "stop" | "start") =>
  execFileSync("pg_ctlcluster", ["--skip-systemctl-redirect", readdirSync("/etc/postgresql")[0]!, "main", action, ...(action === "stop" ? ["-m", "fast"] : [])]);

export const pgUp = () => {
  try {
    execFileSync("pg_isready", ["-h", "127.0.0.1", "-p", "5432", "-q"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};

export const redisUp = () => {
  try {
    return execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", "6379", "ping"], { stdio: ["ignore", "pipe", "ignore"] }).toString().trim() === "PONG";
  } catch {
    return false;
  }
};

export const startRedis = () => {
  if (!redisUp()) execFileSync("redis-server", ["--daemonize", "yes", "--bind", "127.0.0.1", "--port", "6379", "--save", "", "--appendonly", "no"]);
};

export const stopRedis = () => {
  try {
    execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", "6379", "shutdown", "nosave"], { stdio: "ignore" });
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
  if (!pgUp()) pgCluster("start");
  startRedis();
  await until(() => pgUp() && redisUp(), 30_000);
}
