import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectPostgres } from "../src/infra/db.js";
import { blobFromKeyObject } from "../src/lib/ssh/index.js";
import { bareTarget, clientCredentialsGrants, keywardTarget, refreshGrants } from "./oidc.js";
import { buildServer, DURATION, freePort, keywardEnv, load, start } from "./common.js";
import { countStatements, homeScreen, membersScreen, organizationOf, type ScreenRequest } from "./screens.js";

/**
 * npm run bench:profile -- <scenario>: one bench scenario against the compiled server running
 * under `node --cpu-prof`, then the profile summarised (self time by package and by function).
 * Scenarios: me (GraphQL { me }), rest-me, health, sign (one person), sign-users (32 members of
 * one organization), login, cc (OIDC client credentials), refresh (OIDC refresh grants), bare-cc and bare-refresh
 * (the same grants against the bench's baseline, a bare oidc-provider), home (the web app's home query),
 * members (an organization's members screen, 200 members: its two reads in turn); the two screens also
 * print their statements per request (on PostgreSQL). The raw .cpuprofile stays in the
 * printed directory for Chrome DevTools. With --no-profile, only the scenario's figures. CPU per request is split between the
 * main thread and libuv's pool (argon2id hashes there), beside PostgreSQL's and Redis's.
 */
const scenario = process.argv[2] ?? "me";
/** `--no-profile`: the same scenario without the profiler, for A/B runs of one change. */
const profiling = !process.argv.includes("--no-profile");

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** CPU seconds (user + system) used so far by the process `pid` (in all, on its main thread and on libuv's pool), by PostgreSQL's processes and by Redis's (Linux /proc). */
function cpuSeconds(pid: number): { keyward: number; main: number; pool: number; postgres: number; redis: number } {
  const tick = 100; // USER_HZ
  const of = (path: string) => {
    try {
      const stat = readFileSync(`${path}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const fields = stat.slice(close + 2).split(" ");
      return { name: stat.slice(stat.indexOf("(") + 1, close), cpu: (Number(fields[11]) + Number(fields[12])) / tick };
    } catch {
      return { name: "", cpu: 0 };
    }
  };
  const total = { keyward: of(`/proc/${pid}`).cpu, main: of(`/proc/${pid}/task/${pid}`).cpu, pool: 0, postgres: 0, redis: 0 };
  // Threads that have exited are in the process's total only.
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const { name, cpu } = of(`/proc/${pid}/task/${t}`);
    if (name === "libuv-worker") total.pool += cpu;
  }
  for (const p of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    const { name, cpu } = of(`/proc/${p}`);
    if (name === "postgres") total.postgres += cpu;
    else if (name.startsWith("redis-server")) total.redis += cpu;
  }
  return total;
}

/** Monotonic microseconds, the clock V8 stamps profile samples with. */
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/** Self time per profile node, counting only samples taken inside [from, to] (the load, not start-up). */
function summarise(file: string, from: number, to: number) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (t >= from && t <= to) self.set(id, (self.get(id) ?? 0) + delta);
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? (url.startsWith("node:") ? "node:*" : url.includes("/dist/") ? "keyward" : url ? url : functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    const fn = `${functionName || "(anonymous)"} ${url.replace(/^.*node_modules\//, "").replace(/^.*\/dist\//, "")}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`).join("\n");
  console.log(`\nself time by package (${(total / 1e6).toFixed(1)} s sampled):\n${top(byPackage, 25)}`);
  console.log(`\nself time by function:\n${top(byFunction, 45)}`);
}

async function main() {
  const port = await freePort();
  const window = { from: 0, to: 0 };
  const profDir = mkdtempSync(join(tmpdir(), "keyward-profile-"));
  const env = keywardEnv(port, {
    SSH_REQUIRE_VERIFIED_KEYS: "false",
    // The outbox worker would render the bench accounts' emails (MJML's first load, then one render
    // per account) in the middle of whichever scenario is running: not what any scenario measures.
    EMAIL_WORKER_INTERVAL_MS: "3600000",
    DATA_DIR: process.env.DATABASE_URL ? "./data" : mkdtempSync(join(tmpdir(), "keyward-profile-data-")),
    ...(process.env.REDIS_URL ? { REDIS_KEY_PREFIX: `keyward-profile-${process.pid}:` } : {}),
    ...(profiling ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` } : {}),
  });
  // bare-cc, bare-refresh: the bench's baseline for the same grants (a bare oidc-provider on its
  // in-memory adapter, bench/bare-oidc-server.ts), profiled the same way: where its time goes beside Keyward's.
  const bare = scenario.startsWith("bare-");
  const server = bare
    ? await start("bench/bare-oidc-server.ts", { PORT: String(port), ...(profiling ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` } : {}) }, `http://127.0.0.1:${port}/.well-known/openid-configuration`)
    : await start(buildServer(), env, `http://127.0.0.1:${port}/api/health`);
  // CPU time of Keyward, PostgreSQL and Redis over the load: on a machine shared with its
  // neighbours, CPU per request moves less from run to run than requests per second do.
  let cpuFrom = cpuSeconds(server.pid!);
  const mark = () => {
    window.from = nowUs();
    cpuFrom = cpuSeconds(server.pid!);
  };
  const base = `http://127.0.0.1:${port}`;
  const report = (r: { rps: number; p50: unknown; p99: unknown }) => {
    const cpu = cpuSeconds(server.pid!);
    const perRequest = (k: keyof typeof cpu) => (((cpu[k] - cpuFrom[k]) * 1000) / (r.rps * DURATION)).toFixed(3);
    console.log(`${scenario}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms over ${DURATION} s`);
    console.log(`  CPU per request: ${bare ? "bare oidc-provider" : "Keyward"} ${perRequest("keyward")} ms (main thread ${perRequest("main")}, libuv pool ${perRequest("pool")}), PostgreSQL ${perRequest("postgres")} ms, Redis ${perRequest("redis")} ms`);
  };
  const headers = { "content-type": "application/json" };
  try {
    if (bare) {
      const target = await bareTarget(base, 8);
      mark();
      const f = scenario === "bare-cc" ? await clientCredentialsGrants(target, DURATION, 16) : await refreshGrants(target, DURATION);
      window.to = nowUs();
      report({ ...f, p50: f.p50.toFixed(1), p99: f.p99.toFixed(1) });
    } else await keyward();
  } finally {
    const exited = new Promise((resolve) => server.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  if (!profiling) return;
  const file = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no profile written in ${profDir}`);
  console.log(`profile: ${join(profDir, file)}`);
  summarise(join(profDir, file), window.from, window.to);

  async function keyward() {
    const credentials = JSON.stringify({ email: `profile-${process.pid}@example.com`, password: "bench password value" });
    await fetch(`${base}/api/v1/auth/register`, { method: "POST", headers, body: credentials });
    const token = ((await (await fetch(`${base}/api/v1/auth/login`, { method: "POST", headers, body: credentials })).json()) as any).data.token;
    const auth = { ...headers, authorization: `Bearer ${token}` };
    const post = async (path: string, body: unknown) => ((await (await fetch(base + path, { method: "POST", headers: auth, body: JSON.stringify(body) })).json()) as any).data;
    let r;
    let screens: ScreenRequest[] | undefined;
    mark();
    if (scenario === "me") r = await load("me", { url: `${base}/graphql`, method: "POST", headers: auth, body: JSON.stringify({ query: "{ me { id email } }" }), connections: 32 });
    else if (scenario === "rest-me") r = await load("rest-me", { url: `${base}/api/v1/auth/me`, headers: auth, connections: 32 });
    else if (scenario === "health") r = await load("health", { url: `${base}/api/health`, connections: 32 });
    else if (scenario === "login") r = await load("login", { url: `${base}/api/v1/auth/login`, method: "POST", headers, body: credentials, connections: 8 });
    else if (scenario === "sign") {
      const org = (await post("/api/v1/organizations", { name: "Profile" })).organization;
      await post(`/api/v1/organizations/${org.id}/cas`, { name: "Profile CA" });
      await post(`/api/v1/organizations/${org.id}/principals`, { name: "app" });
      const key = await post("/api/v1/ssh/keys", { key: `ssh-ed25519 ${blobFromKeyObject(generateKeyPairSync("ed25519").publicKey).toString("base64")} profile` });
      mark();
      r = await load("sign", { url: `${base}/api/v1/ssh/sign`, method: "POST", headers: auth, body: JSON.stringify({ key_id: key.id, principals: ["app"] }), connections: 32 });
    } else if (scenario === "sign-users") {
      if (!process.env.DATABASE_URL) throw new Error("sign-users verifies its members' addresses in the database: set DATABASE_URL");
      const sql = connectPostgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} });
      // The same load from 32 members of one organization, one connection each: signatures of
      // different people, which share the organization's row but not an account's or a membership's.
      const org = (await post("/api/v1/organizations", { name: "Profile" })).organization;
      await post(`/api/v1/organizations/${org.id}/cas`, { name: "Profile CA" });
      const principal = (await post(`/api/v1/organizations/${org.id}/principals`, { name: "app" })).principal;
      const members: { headers: Record<string, string>; body: string }[] = [];
      for (let i = 0; i < 32; i++) {
        const member = JSON.stringify({ email: `profile-${process.pid}-${i}@example.com`, password: "bench password value" });
        await fetch(`${base}/api/v1/auth/register`, { method: "POST", headers, body: member });
        // Invitations reach verified addresses only; the mail goes nowhere here.
        await sql`update users set email_verified_at = now(), email_verified_via = 'email_link' where email = ${JSON.parse(member).email}`;
        const memberToken = ((await (await fetch(`${base}/api/v1/auth/login`, { method: "POST", headers, body: member })).json()) as any).data.token;
        const mine = { ...headers, authorization: `Bearer ${memberToken}` };
        await post(`/api/v1/organizations/${org.id}/members`, { email: JSON.parse(member).email, role: "member" });
        const invites = ((await (await fetch(`${base}/api/v1/users/me/invites`, { headers: mine })).json()) as any).data.invites;
        await fetch(`${base}/api/v1/users/me/invites/${invites[0].id}/accept`, { method: "POST", headers: mine, body: "{}" });
        await post(`/api/v1/organizations/${org.id}/principals/${principal.id}/members`, { email: JSON.parse(member).email });
        const keyLine = `ssh-ed25519 ${blobFromKeyObject(generateKeyPairSync("ed25519").publicKey).toString("base64")} profile-${i}`;
        const key = ((await (await fetch(`${base}/api/v1/ssh/keys`, { method: "POST", headers: mine, body: JSON.stringify({ key: keyLine }) })).json()) as any).data;
        members.push({ headers: mine, body: JSON.stringify({ key_id: key.id, org_id: org.id, principals: ["app"] }) });
      }
      await sql.end();
      let next = 0;
      mark();
      r = await load("sign-users", {
        url: `${base}/api/v1/ssh/sign`,
        method: "POST",
        connections: 32,
        requests: [{ setupRequest: (req) => ({ ...req, ...members[next++ % members.length]! }) }],
      });
    } else if (scenario === "cc" || scenario === "refresh") {
      const org = (await post("/api/v1/organizations", { name: "Profile" })).organization;
      const target = await keywardTarget(base, token, org.id, { email: `profile-${process.pid}@example.com`, password: "bench password value" }, 8);
      mark();
      const f = scenario === "cc" ? await clientCredentialsGrants(target, DURATION, 16) : await refreshGrants(target, DURATION);
      r = { ...f, p50: f.p50.toFixed(1), p99: f.p99.toFixed(1) };
    } else if (scenario === "home" || scenario === "members") {
      // The person owns an organization either way (the home screen then lists it).
      const orgId = await organizationOf(base, auth, scenario === "members" ? 200 : 0);
      screens = scenario === "home" ? homeScreen() : membersScreen(orgId);
      let next = 0;
      mark();
      r = await load(scenario, {
        url: `${base}/graphql`,
        method: "POST",
        headers: auth,
        connections: 32,
        requests: [{ setupRequest: (req) => ({ ...req, body: screens![next++ % screens!.length]!.body }) }],
      });
    } else throw new Error(`unknown scenario ${scenario}`);
    window.to = nowUs();
    report(r);
    if (screens && process.env.DATABASE_URL) {
      const counts = await countStatements(env, auth, screens);
      console.log(`  statements per request: ${screens.map((q) => `${q.name} ${counts.get(q.name)} (bound ${q.bound})`).join(", ")}`);
      const over = screens.filter((q) => counts.get(q.name)! > q.bound);
      if (over.length) throw new Error(`above the statement bound: ${over.map((q) => q.name).join(", ")}`);
    }
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
