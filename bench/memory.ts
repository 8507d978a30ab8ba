import { mkdtempSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { buildServer, failures, freePort, keywardEnv, rssMb, start } from "./common.js";

/**
 * npm run bench:memory: the resident memory of one Keyward process holding BENCH_SESSIONS live
 * sessions (default 10,000) while it answers BENCH_REQUESTS authenticated requests (default
 * 100,000: GraphQL { me } and REST /auth/me, each with one of the sessions), read after each tenth
 * of the run. Embedded default unless DATABASE_URL and REDIS_URL are set; on the embedded default
 * the sessions live in the process, which is the case the figure is about.
 */
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100_000);

async function main() {
  const port = await freePort();
  const metricsToken = "bench-memory-metrics-token-0123456789abcdef";
  const env = keywardEnv(port, {
    METRICS_TOKEN: metricsToken,
    DATA_DIR: mkdtempSync(join(tmpdir(), "keyward-bench-memory-")),
    ...(process.env.REDIS_URL ? { REDIS_KEY_PREFIX: `keyward-bench-memory-${process.pid}:` } : {}),
  });
  const server = await start(buildServer(), env, `http://127.0.0.1:${port}/api/health`);
  const base = `http://127.0.0.1:${port}`;
  const headers = { "content-type": "application/json" };
  // Where the resident memory is: V8's heap (used and reserved) and memory outside it.
  const where = async () => {
    const metrics = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
    const mb = (name: string) => (Number(new RegExp(`^${name} (\\S+)$`, "m").exec(metrics)?.[1] ?? NaN) / 1048576).toFixed(0);
    return `V8 heap used ${mb("nodejs_heap_size_used_bytes")} MB of ${mb("nodejs_heap_size_total_bytes")} MB reserved; external ${mb("nodejs_external_memory_bytes")} MB`;
  };
  try {
    const credentials = JSON.stringify({ email: `memory-${process.pid}@example.com`, password: "bench password value" });
    await fetch(`${base}/api/v1/auth/register`, { method: "POST", headers, body: credentials });
    const started = await rssMb(server.pid!);

    // Every sign-in is a live session (one account, many devices: the store holds them all).
    // The resident memory is also sampled while they run: eight argon2id sign-ins in flight is
    // where it peaks (each hash's 19 MiB on the thread pool), not the steady state after them.
    const tokens: string[] = [];
    let signInPeak = started;
    const signInStart = performance.now();
    const sampler = setInterval(() => void rssMb(server.pid!).then((mb) => (signInPeak = Math.max(signInPeak, mb)), () => {}), 250);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (tokens.length < SESSIONS) {
          const res = await fetch(`${base}/api/v1/auth/login`, { method: "POST", headers, body: credentials });
          if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
          tokens.push(((await res.json()) as { data: { token: string } }).data.token);
        }
      }),
    );
    clearInterval(sampler);
    const signInSeconds = (performance.now() - signInStart) / 1000;
    const withSessions = await rssMb(server.pid!);
    const afterSignIns = await where();

    const samples: number[] = [];
    const tenth = Math.ceil(REQUESTS / 10);
    let n = 0;
    for (let i = 0; i < 10; i++) {
      const r = await autocannon({
        url: base,
        connections: 32,
        amount: tenth,
        requests: [
          {
            setupRequest: (req) => {
              const token = tokens[n++ % tokens.length]!;
              const auth = { ...req.headers, authorization: `Bearer ${token}` };
              return n % 2 === 0
                ? { ...req, method: "POST", path: "/graphql", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ query: "{ me { id email } }" }) }
                : { ...req, method: "GET", path: "/api/v1/auth/me", headers: auth };
            },
          },
        ],
      });
      const bad = r.non2xx + r.errors + r.timeouts;
      if (bad > 0) failures.push(`tenth ${i + 1}: ${bad} failed requests`);
      samples.push(await rssMb(server.pid!));
    }
    const [ninth, last] = [samples[8]!, samples[9]!];
    console.log(`Keyward memory: ${cpus().length} cores, database ${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"}, sessions ${process.env.REDIS_URL ? "Redis" : "in process"}`);
    console.log(`RSS at start ${started.toFixed(0)} MB; peak during the sign-ins ${signInPeak.toFixed(0)} MB; with ${tokens.length} live sessions ${withSessions.toFixed(0)} MB (signed in at ${(tokens.length / signInSeconds).toFixed(0)}/s)`);
    console.log(`RSS after each tenth of ${REQUESTS} requests (MB): ${samples.map((s) => s.toFixed(0)).join(", ")}`);
    console.log(`after the sign-ins: ${afterSignIns}; after the requests: ${await where()}`);
    console.log(`peak ${Math.max(signInPeak, withSessions, ...samples).toFixed(0)} MB (target ≤ 250); growth over the last tenth ${(last - ninth).toFixed(1)} MB`);
  } finally {
    server.kill("SIGTERM");
  }
}

main().then(
  () => {
    if (failures.length === 0) process.exit(0);
    console.error(`FAILED:\n  ${failures.join("\n  ")}`);
    process.exit(1);
  },
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
