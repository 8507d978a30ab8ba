import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import type { Config } from "./config/index.js";
import { configuredThreadPoolSize, threadPoolSize } from "./config/thread-pool.js";

/**
 * One instance on every core (WORKERS=N): the primary forks N workers that each run the
 * whole service on the same port (node:cluster hands them the connections) and share nothing but
 * PostgreSQL and Redis, exactly like N instances behind a load balancer; jobs already coordinate
 * through the database. The primary only supervises: a worker that dies is replaced, with a
 * growing delay while they keep dying (a crash loop is slowed, never given up on: the instance
 * stays, and serves again once whatever kills them is gone); a worker that could not start because
 * PostgreSQL or Redis is unreachable (exit code EXIT_DEPENDENCY_UNAVAILABLE) is retried the same
 * way until the dependency is back; a worker that could not start for any other reason stops the
 * whole instance (restarting it would fail the same way: a port in use, a bad key). SIGTERM stops
 * every worker cleanly before the primary exits.
 */
export interface WorkerMessage {
  type: "listening";
}

/** A process that could not start because a dependency is unreachable exits with this (sysexits' EX_TEMPFAIL): try again later. */
export const EXIT_DEPENDENCY_UNAVAILABLE = 75;

/** Replacement delays: none for the first death in a while, then 1 s doubling to 10 s; a minute without one starts over. */
const RESTART_WINDOW_MS = 60_000;
const RESTART_DELAY_MAX_MS = 10_000;
export const restartDelay = (recentDeaths: number) => (recentDeaths <= 1 ? 0 : Math.min(1000 * 2 ** (recentDeaths - 2), RESTART_DELAY_MAX_MS));

export function runPrimary(config: Config): Promise<never> {
  const n = config.workers;
  const listening = new Set<number>();
  const deaths: number[] = [];
  const pending = new Set<NodeJS.Timeout>();
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
    for (const t of pending) clearTimeout(t);
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
    if (!started && exitCode !== EXIT_DEPENDENCY_UNAVAILABLE) {
      process.stderr.write(`keyward: a worker could not start (exit ${exitCode ?? signal}); stopping.\n`);
      return stopAll(1);
    }
    const now = Date.now();
    deaths.push(now);
    while (deaths.length && deaths[0]! < now - RESTART_WINDOW_MS) deaths.shift();
    const delay = restartDelay(deaths.length);
    const why = started ? `worker ${worker.process.pid} ended (${signal ?? `exit ${exitCode}`})` : `worker ${worker.process.pid} could not reach PostgreSQL or Redis`;
    process.stderr.write(`keyward: ${why}; starting another${delay ? ` in ${delay / 1000} s` : ""}.\n`);
    const timer = setTimeout(() => {
      pending.delete(timer);
      if (!closing) fork();
    }, delay);
    pending.add(timer);
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
