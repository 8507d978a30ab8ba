import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import autocannon from "autocannon";

/** Shared by the bench scripts: ports, processes, load and the failures that fail the run. */
export const DURATION = Number(process.env.BENCH_DURATION ?? 10);

export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/**
 * Keyward as it runs in production: compiled JavaScript (`npm run build:server`, built once per
 * bench run), not the TypeScript loader.
 */
export function buildServer(): string {
  // BENCH_SERVER=<dir>/src/main.js runs a build kept aside (a copy of dist/) instead: A/B runs of one change.
  if (process.env.BENCH_SERVER) return process.env.BENCH_SERVER;
  execFileSync("npm", ["run", "--silent", "build:server"], { stdio: ["ignore", "ignore", "inherit"] });
  return "dist/src/main.js";
}

/** Keyward's environment in every bench: production mode on `port`, no rate limits, mail to the log. */
export function keywardEnv(port: number, extra: Record<string, string>): Record<string, string> {
  return {
    NODE_ENV: "production",
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: "warn",
    SESSION_SECRET: "bench-session-secret-0123456789-abcdefghij",
    ENCRYPTION_KEYS: `b1:${Buffer.alloc(32, 9).toString("base64")}`,
    RATE_LIMIT_ENABLED: "false",
    EMAIL_PROVIDER: "log",
    // Mail goes nowhere here, so no address can be proved: bench accounts create organizations unverified.
    REQUIRE_VERIFIED_EMAIL: "false",
    ...extra,
  };
}

/** Starts an entry point as its own process (TypeScript through tsx) and waits until `readyUrl` answers. */
export async function start(script: string, env: Record<string, string>, readyUrl: string): Promise<ChildProcess> {
  // Compiled Keyward runs with the flags and malloc settings of `npm run start:prod` (MALLOC_ARENA_MAX and
  // MALLOC_MMAP_THRESHOLD_ may be overridden to compare).
  const compiled = !script.endsWith(".ts");
  // BENCH_NODE_FLAGS (space-separated) replaces those flags (and is added to a baseline's), to compare V8 settings A/B.
  const custom = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean);
  const args = compiled ? [...(custom ?? ["--max-semi-space-size=16", "--heap-growing-percent=30"]), script] : [...(custom ?? []), "--import", "tsx", script];
  const malloc = compiled ? { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? "2", MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? "131072" } : {};
  const child = spawn(process.execPath, args, { env: { ...process.env, ...malloc, ...env }, stdio: ["ignore", process.env.BENCH_SERVER_STDOUT ? "inherit" : "ignore", "inherit"] });
  let exited = false;
  child.on("exit", () => (exited = true));
  for (let i = 0; i < 600 && !exited; i++) {
    if (await fetch(readyUrl).then(() => true, () => false)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`${script} did not start`);
}

/** Scenarios that had failed requests: the run ends with exit code 1 and names them. */
export const failures: string[] = [];

export async function load(name: string, opts: autocannon.Options) {
  const r = await autocannon({ duration: DURATION, ...opts });
  const bad = r.non2xx + r.errors + r.timeouts;
  if (bad > 0) failures.push(`${name}: ${bad} of ${r.requests.total + r.errors} requests failed (${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts)`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total };
}

/** Resident set size of a process, in MB (Linux). */
export async function rssMb(pid: number): Promise<number> {
  const { readFile } = await import("node:fs/promises");
  const kb = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb ?? 0) / 1024;
}
