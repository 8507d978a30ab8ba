import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import type { Config } from "./config/index.js";
import { configuredThreadPoolSize, threadPoolSize } from "./config/thread-pool.js";

/**
 * One instance on every core (WORKERS=N): the primary process forks N workers that each run the
 * whole service on the same port (node:cluster hands them the connections) and share nothing but
 * PostgreSQL and Redis, exactly like N instances behind a load balancer; jobs already coordinate
 * through the database. The primary only supervises: a worker that dies is replaced, a worker that
 * cannot start stops the whole instance (restarting it would fail the same way), and SIGTERM stops
 * every worker cleanly before the primary exits.
 */
export interface WorkerMessage {
  type: "listening";
}

const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;

export function runPrimary(config: Config): Promise<never> {
  const n = config.workers;
  const listening = new Set<number>();
  const restarts: number[] = [];
  let closing = false;
  let announced = false;

  // Each worker's share of the cores for its thread pool (src/config/thread-pool.ts), unless set.
  const workerEnv = configuredThreadPoolSize ? {} : { UV_THREADPOOL_SIZE: String(threadPoolSize(availableParallelism(), n)) };
  const fork = (): Worker => {
    const worker = cluster.fork(workerEnv);
    worker.on("message", (msg: WorkerMessage) => {
      if (msg?.type !== "listening") return;
      listening.add(worker.id);
      if (!announced && listening.size === n) {
        announced = true;
        process.stderr.write(
          `Keyward is listening on ${config.http.host}:${config.http.port} with ${n} workers (pids ${Object.values(cluster.workers ?? {}).map((w) => w?.process.pid).join(", ")}), public URL ${config.http.publicUrl}; database: PostgreSQL; sessions: Redis.\n`,
        );
      }
    });
    return worker;
  };

  const stopAll = (code: number) => {
    closing = true;
    const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
    if (alive.length === 0) process.exit(code);
    let left = alive.length;
    for (const w of alive) {
      w.once("exit", () => --left === 0 && process.exit(code));
      w.process.kill("SIGTERM");
    }
  };

  cluster.on("exit", (worker, exitCode, signal) => {
    const started = listening.delete(worker.id);
    if (closing) return;
    if (!started) {
      process.stderr.write(`keyward: a worker could not start (exit ${exitCode ?? signal}); stopping.\n`);
      return stopAll(1);
    }
    const now = Date.now();
    restarts.push(now);
    while (restarts.length && restarts[0]! < now - RESTART_WINDOW_MS) restarts.shift();
    if (restarts.length > MAX_RESTARTS) {
      process.stderr.write(`keyward: workers died ${restarts.length} times within a minute; stopping.\n`);
      return stopAll(1);
    }
    process.stderr.write(`keyward: worker ${worker.process.pid} ended (${signal ?? `exit ${exitCode}`}); starting another.\n`);
    fork();
  });
  process.on("SIGTERM", () => stopAll(0));
  process.on("SIGINT", () => stopAll(0));
  for (let i = 0; i < n; i++) fork();
  return new Promise<never>(() => {});
}

/** In a worker: tell the primary this one serves (its banner stands for all of them). */
export function reportListening(): boolean {
  if (!cluster.isWorker) return false;
  process.send?.({ type: "listening" } satisfies WorkerMessage);
  return true;
}

export const isClusterPrimary = (config: Config): boolean => config.workers > 1 && cluster.isPrimary;
