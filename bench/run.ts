// The raw argon2id baseline hashes on a thread pool sized as the server sizes its own.
import "../src/config/thread-pool.js";
import { mkdtempSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { generateKeyPairSync } from "node:crypto";
import { openDatabase } from "../src/infra/db.js";
import { createPasswordHasher, totpCode, totpStep } from "../src/lib/crypto/index.js";
import { blobFromKeyObject, generateCaKey, loadPrivateKey, signCertificate } from "../src/lib/ssh/index.js";
import { sql } from "drizzle-orm";
import { bareTarget, clientCredentialsGrants, keywardTarget, refreshGrants } from "./oidc.js";
import { buildServer, DURATION, failures, freePort, keywardEnv, load, start } from "./common.js";
import { countStatements, homeScreen, membersScreen, organizationOf, type ScreenRequest } from "./screens.js";

/**
 * npm run bench: Keyward runs as its own process (as in production); this process only generates
 * load. Each scenario is printed beside a baseline measured in the same run on the same machine.
 */
const ARGON = { memoryCost: 19456, timeCost: 2, parallelism: 1 };

/** Raw argon2id verifications per second with the service's parameters and concurrency. */
async function argonBaseline(concurrency: number) {
  const hasher = createPasswordHasher(ARGON);
  const hash = await hasher.hash("bench password value");
  let done = 0;
  const latencies: number[] = [];
  const until = Date.now() + DURATION * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        const t = performance.now();
        await hasher.verify(hash, "bench password value");
        latencies.push(performance.now() - t);
        done++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!;
  return { rps: done / DURATION, p50: pct(0.5), p99: pct(0.99), total: done };
}

/**
 * The signing baseline, without HTTP: the same number of certificates signed natively over real
 * certificate blobs, each followed by one INSERT into the same kind of database, `concurrency` at once.
 */
async function nativeSigningBaseline(count: number, concurrency: number, subject: Buffer) {
  const ca = await generateCaKey("ed25519", "bench-ca");
  const caKey = loadPrivateKey(ca.privatePem);
  const db = await openDatabase({ url: process.env.DATABASE_URL, dataDir: "memory://" });
  const table = sql.raw(`bench_certs_${process.pid}`);
  await db.db.execute(sql`create table ${table} (serial bigint primary key, certificate text not null)`);
  let next = 1;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next <= count) {
        const serial = next++;
        const t = performance.now();
        const line = signCertificate(caKey, ca.publicBlob, {
          publicKey: subject,
          serial: BigInt(serial),
          type: "user",
          keyId: "bench@example.com [org:bench]",
          principals: ["app"],
          validAfter: new Date(Date.now() - 300_000),
          validBefore: new Date(Date.now() + 3600_000),
          extensions: ["permit-pty"],
        });
        await db.db.execute(sql`insert into ${table} (serial, certificate) values (${serial}, ${line})`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await db.db.execute(sql`drop table ${table}`);
  await db.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!;
  return { rps: count / seconds, p50: pct(0.5), p99: pct(0.99), total: count };
}

async function enrollTotpUsers(base: string, count: number): Promise<Array<{ email: string; secret: string }>> {
  const headers = { "content-type": "application/json" };
  const users: Array<{ email: string; secret: string }> = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        const i = next++;
        const email = `mfa-${process.pid}-${i}@example.com`;
        const body = JSON.stringify({ email, password: "bench password value" });
        await fetch(`${base}/api/v1/auth/register`, { method: "POST", headers, body });
        const token = ((await (await fetch(`${base}/api/v1/auth/login`, { method: "POST", headers, body })).json()) as any).data.token;
        const auth = { ...headers, authorization: `Bearer ${token}` };
        const secret = ((await (await fetch(`${base}/api/v1/auth/totp/enroll`, { method: "POST", headers: auth, body: "{}" })).json()) as any).data.secret;
        // The current step's code; the sign-in later sends the next step's (a step's code works once).
        const code = totpCode(secret, totpStep(new Date()));
        const enrolled = await fetch(`${base}/api/v1/auth/totp/verify-enrollment`, { method: "POST", headers: auth, body: JSON.stringify({ code }) });
        if (enrolled.status !== 200) throw new Error(`TOTP enrollment failed: ${enrolled.status} ${await enrolled.text()}`);
        users.push({ email, secret });
      }
    }),
  );
  return users;
}

async function mfaLoginLatency(base: string, users: Array<{ email: string; secret: string }>, concurrency: number) {
  const headers = { "content-type": "application/json" };
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < users.length) {
        const u = users[next++]!;
        const t = performance.now();
        const first = (await (await fetch(`${base}/api/v1/auth/login`, { method: "POST", headers, body: JSON.stringify({ email: u.email, password: "bench password value" }) })).json()) as any;
        const done = await fetch(`${base}/api/v1/auth/totp/verify`, {
          method: "POST",
          headers,
          body: JSON.stringify({ mfa_token: first.data.mfa_token, code: totpCode(u.secret, totpStep(new Date()) + 1) }),
        });
        if (done.status !== 200) throw new Error(`MFA sign-in failed: ${done.status} ${await done.text()}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!;
  return { rps: latencies.length / ((performance.now() - started) / 1000), p50: pct(0.5), p99: pct(0.99), total: latencies.length };
}

async function main() {
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379/0";
  await new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 }).connect().then(
    () => undefined,
    () => {
      throw new Error(`bench needs Redis (REDIS_URL, default ${redisUrl}) so the baseline reads the same session store`);
    },
  );
  const port = await freePort();
  const barePort = await freePort();
  const prefix = `keyward-bench-${process.pid}:`;
  const env = keywardEnv(port, {
    // The bench registers a key without ssh-keygen at hand, so it skips proof of possession.
    SSH_REQUIRE_VERIFIED_KEYS: "false",
    // The outbox worker would render the bench accounts' emails (MJML's first load, then one render
    // per account) in the middle of whichever scenario is running: not what any scenario measures.
    EMAIL_WORKER_INTERVAL_MS: "3600000",
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: prefix,
    DATA_DIR: process.env.DATABASE_URL ? "./data" : mkdtempSync(join(tmpdir(), "keyward-bench-")),
  });
  const entry = buildServer();
  const server = await start(entry, env, `http://127.0.0.1:${port}/api/health`);
  const bare = await start("bench/bare-session-server.ts", { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix, PORT: String(barePort) }, `http://127.0.0.1:${barePort}/me`);
  const oidcPort = await freePort();
  const bareOidc = await start("bench/bare-oidc-server.ts", { PORT: String(oidcPort) }, `http://127.0.0.1:${oidcPort}/.well-known/openid-configuration`);
  const base = `http://127.0.0.1:${port}`;
  const headers = { "content-type": "application/json" };
  try {
    const email = `bench-${Date.now()}@example.com`;
    const credentials = JSON.stringify({ email, password: "bench password value" });
    await fetch(`${base}/api/v1/auth/register`, { method: "POST", headers, body: credentials });
    const token = ((await (await fetch(`${base}/api/v1/auth/login`, { method: "POST", headers, body: credentials })).json()) as any).data.token;

    console.log(`Keyward bench: ${DURATION}s per scenario, ${cpus().length} cores (${cpus()[0]?.model}), database ${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"}, sessions Redis`);
    const login = await load("password login", { url: `${base}/api/v1/auth/login`, method: "POST", headers, body: credentials, connections: 8 });
    const argon = await argonBaseline(4);
    const me = await load("GraphQL { me }", {
      url: `${base}/graphql`,
      method: "POST",
      headers: { ...headers, authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: "{ me { id email } }" }),
      connections: 32,
    });
    const bareMe = await load("bare session handler", { url: `http://127.0.0.1:${barePort}/me`, headers: { authorization: `Bearer ${token}` }, connections: 32 });

    const restMe = await load("REST /auth/me", { url: `${base}/api/v1/auth/me`, headers: { authorization: `Bearer ${token}` }, connections: 32 });
    const health = await load("/api/health", { url: `${base}/api/health`, connections: 32 });
    const bareHealth = await load("bare Express handler", { url: `http://127.0.0.1:${barePort}/health`, connections: 32 });

    // Signing: the owner of an organization with an ed25519 user CA signs through REST.
    const auth = { ...headers, authorization: `Bearer ${token}` };
    const post = async (path: string, body: unknown) => ((await (await fetch(base + path, { method: "POST", headers: auth, body: JSON.stringify(body) })).json()) as any).data;
    const org = (await post("/api/v1/organizations", { name: "Bench" })).organization;
    await post(`/api/v1/organizations/${org.id}/cas`, { name: "Bench CA" });
    await post(`/api/v1/organizations/${org.id}/principals`, { name: "app" });
    const userKey = blobFromKeyObject(generateKeyPairSync("ed25519").publicKey);
    const sshKey = await post("/api/v1/ssh/keys", { key: `ssh-ed25519 ${userKey.toString("base64")} bench` });
    const signing = await load("certificate signing", {
      url: `${base}/api/v1/ssh/sign`,
      method: "POST",
      headers: auth,
      body: JSON.stringify({ key_id: sshKey.id, principals: ["app"] }),
      connections: 32,
    });
    const signBaseline = await nativeSigningBaseline(signing.total, 32, userKey);
    // The web app's screens as it sends them (their documents read from web/src), for the same
    // person, now an organization's owner: the home screen, beside { me } what the first screen of
    // the day costs; and an organization's members screen (200 members and the owner), its two
    // reads in turn. Each prints the statements one request makes and fails the run above its bound.
    const screenLoad = async (name: string, screens: ScreenRequest[]) => {
      let next = 0;
      return load(name, {
        url: `${base}/graphql`,
        method: "POST",
        headers: auth,
        connections: 32,
        requests: [{ setupRequest: (req) => ({ ...req, body: screens[next++ % screens.length]!.body }) }],
      });
    };
    const home = await screenLoad("GraphQL home screen", homeScreen());
    const membersOrg = await organizationOf(base, auth, 200);
    const members = await screenLoad("GraphQL members screen, 201 members", membersScreen(membersOrg));
    const screens = [...homeScreen(), ...membersScreen(membersOrg)];
    const statements = process.env.DATABASE_URL ? await countStatements(env, auth, screens) : undefined;
    for (const s of screens) {
      const n = statements?.get(s.name);
      if (n !== undefined && n > s.bound) failures.push(`${s.name}: ${n} statements per request, above its bound of ${s.bound}`);
    }
    const statementLine = (names: string[]) =>
      statements ? `statements per request: ${names.map((n) => `${n} ${statements.get(n)} (bound ${screens.find((s) => s.name === n)!.bound})`).join(", ")}` : "statements: counted on PostgreSQL only (set DATABASE_URL)";

    // Sign-in with MFA: password, then a TOTP code. A code works once, so each sign-in uses its
    // own account (enrolled up front); the figure is the latency of the two requests together.
    const mfaUsers = await enrollTotpUsers(base, Number(process.env.BENCH_MFA_USERS ?? 300));
    const mfaLogin = await mfaLoginLatency(base, mfaUsers, 4);

    // OIDC grants: the same refresh-token (with rotation) and client-credentials requests against
    // Keyward and against a bare oidc-provider with its in-memory adapter.
    const chains = 8;
    const keyward = await keywardTarget(base, token, org.id, { email, password: "bench password value" }, chains);
    const bareOidcTarget = await bareTarget(`http://127.0.0.1:${oidcPort}`, chains);
    const refresh = await refreshGrants(keyward, DURATION);
    const bareRefresh = await refreshGrants(bareOidcTarget, DURATION);
    const cc = await clientCredentialsGrants(keyward, DURATION, 16);
    const bareCc = await clientCredentialsGrants(bareOidcTarget, DURATION, 16);

    // One instance on every core: the same { me } load against WORKERS=2 (same database and Redis,
    // so the session works there too). Workers need PostgreSQL: on PGlite the scenario is skipped.
    let twoWorkers: Awaited<ReturnType<typeof load>> | undefined;
    if (process.env.DATABASE_URL) {
      const port2 = await freePort();
      const workers = await start(entry, { ...env, PORT: String(port2), PUBLIC_URL: `http://127.0.0.1:${port2}`, WORKERS: "2", MIGRATE_ON_START: "false" }, `http://127.0.0.1:${port2}/api/health`);
      try {
        twoWorkers = await load("GraphQL { me } with WORKERS=2", { url: `http://127.0.0.1:${port2}/graphql`, method: "POST", headers: { ...headers, authorization: `Bearer ${token}` }, body: JSON.stringify({ query: "{ me { id email } }" }), connections: 32 });
      } finally {
        workers.kill("SIGTERM");
      }
    }

    const row = (name: string, r: { rps: number; p50: number; p99: number }) =>
      `${name.padEnd(46)} ${r.rps.toFixed(1).padStart(9)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)}`;
    console.log(`\n${"scenario".padEnd(46)} ${"req/s".padStart(9)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)}`);
    console.log(row("password login (POST /api/v1/auth/login)", login));
    console.log(row("  baseline: raw argon2id verify, 4 in flight", argon));
    console.log(`  ratio: ${(login.rps / argon.rps).toFixed(2)} of the raw hash rate`);
    console.log(row("GraphQL { me } with a bearer session", me));
    console.log(row("  baseline: bare Express reading the session", bareMe));
    console.log(`  ratio: ${(me.rps / bareMe.rps).toFixed(2)} of the bare handler`);
    console.log(row("GraphQL home screen (the web app's Home query)", home));
    console.log(`  ratio: ${(home.rps / me.rps).toFixed(2)} of { me }; ${statementLine(["Home"])}`);
    console.log(row("GraphQL members screen, 201 members", members));
    console.log(`  OrgMembers and OrgMembersCompliance in turn; ${statementLine(["OrgMembers", "OrgMembersCompliance"])}`);
    console.log(row("REST GET /api/v1/auth/me with a bearer session", restMe));
    console.log(`  ratio: ${(restMe.rps / bareMe.rps).toFixed(2)} of the bare handler (the session baseline above)`);
    console.log(row("GET /api/health", health));
    console.log(row("  baseline: bare Express handler, same JSON", bareHealth));
    console.log(`  ratio: ${(health.rps / bareHealth.rps).toFixed(2)} of the bare handler`);
    if (twoWorkers) {
      console.log(row("GraphQL { me }, one instance with WORKERS=2", twoWorkers));
      console.log(`  ratio: ${(twoWorkers.rps / me.rps).toFixed(2)} of one worker (the { me } row above)`);
    } else {
      console.log("GraphQL { me } with WORKERS=2: skipped (workers need PostgreSQL: set DATABASE_URL)");
    }
    console.log(row("certificate signing (POST /api/v1/ssh/sign)", signing));
    console.log(row(`  baseline: ${signing.total} native signatures + inserts`, signBaseline));
    console.log(`  ratio: ${(signing.rps / signBaseline.rps).toFixed(2)} of the in-process pipeline`);
    console.log(row(`sign-in with MFA (password + TOTP), ${mfaLogin.total} sign-ins`, mfaLogin));
    console.log(`  (p50/p99 are for the two requests together; baseline: the password sign-in above)`);
    const cores = cpus().length;
    console.log(row(`OIDC refresh grant, rotation, ${chains} chains`, refresh));
    console.log(row("  baseline: bare oidc-provider, memory adapter", bareRefresh));
    console.log(`  ratio: ${(refresh.rps / bareRefresh.rps).toFixed(2)}; per core: ${(refresh.rps / cores).toFixed(1)} vs ${(bareRefresh.rps / cores).toFixed(1)} (Keycloak sizing: 120/s per vCPU)`);
    console.log(row("OIDC client-credentials grant, 16 connections", cc));
    console.log(row("  baseline: bare oidc-provider, memory adapter", bareCc));
    console.log(`  ratio: ${(cc.rps / bareCc.rps).toFixed(2)}; per core: ${(cc.rps / cores).toFixed(1)} vs ${(bareCc.rps / cores).toFixed(1)} (Keycloak sizing: 120/s per vCPU)`);
  } finally {
    server.kill("SIGTERM");
    bare.kill("SIGTERM");
    bareOidc.kill("SIGTERM");
    const redis = new Redis(redisUrl);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  }
}

main().then(
  () => {
    if (failures.length === 0) process.exit(0);
    console.error(`\nFAILED: ${failures.length} scenario(s) had failed requests:\n  ${failures.join("\n  ")}`);
    process.exit(1);
  },
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
