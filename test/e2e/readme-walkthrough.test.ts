import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { connectPostgres } from "../../src/infra/db.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { withDatabase } from "../helpers/global-setup.js";
import { startSshd } from "../helpers/sshd.js";

/**
 * The README's "Your first hour" runs as written: its ```sh blocks, in order, in one
 * `bash -euo pipefail`, against Keyward started the way `npm start` starts it, from an empty
 * directory. The only change is the port in the `URL=http://localhost:8080` line. Blocks whose
 * first line is a comment in parentheses (`# (in another terminal)`, `# (on the server, …)`) happen
 * elsewhere and are skipped, by that rule alone. Then the certificate the walk-through wrote must
 * name the principal, its CA must be the organization's, and a real sshd trusting the
 * `keyward_user_ca.pub` it fetched must let the key and certificate in.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const README_URL_LINE = "URL=http://localhost:8080";
/** The local sshd's port: the walk-through runs it on a free one, beside other test runs. */
const README_SSH_PORT_LINE = "SSH_PORT=2222";

interface WalkthroughBlocks {
  run: string[];
  skipped: string[];
}

/** The ```sh blocks between "## Your first hour" and the next "## " heading. */
function firstHourBlocks(readme: string): WalkthroughBlocks {
  const lines = readme.split("\n");
  const start = lines.findIndex((l) => l.trimEnd() === "## Your first hour");
  if (start < 0) throw new Error('README.md has no "## Your first hour" section');
  const next = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  const section = lines.slice(start + 1, next < 0 ? undefined : next);
  const blocks: WalkthroughBlocks = { run: [], skipped: [] };
  let fence: { lang: string; body: string[] } | null = null;
  for (const line of section) {
    if (!fence) {
      const open = /^```(\S*)\s*$/.exec(line);
      if (open) fence = { lang: open[1]!, body: [] };
    } else if (/^```\s*$/.test(line)) {
      if (fence.lang === "sh") {
        const body = fence.body.join("\n");
        const first = fence.body.find((l) => l.trim() !== "") ?? "";
        (/^#\s*\(/.test(first.trim()) ? blocks.skipped : blocks.run).push(body);
      }
      fence = null;
    } else fence.body.push(line);
  }
  if (fence) throw new Error("README.md: a fenced block in Your first hour is not closed");
  return blocks;
}

const freePort = () =>
  new Promise<number>((done) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => done(port));
    });
  });

interface Keyward {
  port: number;
  output: () => string;
  stop(): Promise<void>;
}

/**
 * `npm start` in a fresh directory (`node --import tsx src/main.ts`, development mode, the log
 * email provider), its stdout (the JSON log) also written to `log`, as the README's server block
 * does with `| tee -i ~/keyward.log`. Under DATABASE_URL/REDIS_URL the child gets its own database
 * cloned from the suite's migrated template and its own Redis key prefix, so the walk-through runs
 * on PostgreSQL and Redis too.
 */
async function startKeyward(log: string): Promise<Keyward> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "kw-readme-data-"));
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ["DATABASE_URL", "REDIS_URL", "REDIS_KEY_PREFIX", "PUBLIC_URL", "APP_URL", "EMAIL_PROVIDER", "SESSION_SECRET", "ENCRYPTION_KEYS"]) delete env[k];

  const template = inject("pgTemplate");
  const pgUrl = process.env.DATABASE_URL;
  const dbName = pgUrl && template ? `keyward_readme_${randomBytes(4).toString("hex")}` : null;
  if (dbName) {
    const admin = connectPostgres(pgUrl!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${dbName}" template "${template}"`);
    await admin.end();
    env.DATABASE_URL = withDatabase(pgUrl!, dbName);
  }
  const redisPrefix = `kwreadme:${randomBytes(4).toString("hex")}:`;
  if (process.env.REDIS_URL) Object.assign(env, { REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: redisPrefix });

  // Loopback, as the README's server listens by default.
  Object.assign(env, { NODE_ENV: "development", HOST: "127.0.0.1", PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "info" });
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d) => {
    out += d;
    appendFileSync(log, d);
  });
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dataDir, { recursive: true, force: true });
    if (dbName) {
      const admin = connectPostgres(pgUrl!, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists "${dbName}" with (force)`);
      await admin.end();
    }
    if (process.env.REDIS_URL) {
      const redis = new Redis(process.env.REDIS_URL, { lazyConnect: true });
      await redis.connect();
      const keys = await redis.keys(`${redisPrefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  };

  for (let i = 0; i < 900 && !out.includes("Keyward is listening"); i++) {
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!out.includes("Keyward is listening")) {
    await stop();
    throw new Error(`Keyward did not start:\n${out}`);
  }
  return { port, output: () => out, stop };
}

/** Runs a script file with bash, asynchronously (the server's pipes keep draining meanwhile). */
function runBash(script: string, cwd: string, home: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn("bash", ["-x", "-euo", "pipefail", script], {
      cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

const NEEDED = ["bash", "curl", "jq", "ssh-keygen", "ssh"];
const missing = () => [...NEEDED.filter((p) => spawnSync("sh", ["-c", `command -v ${p}`]).status !== 0), ...(existsSync("/usr/sbin/sshd") ? [] : ["sshd"])];

let keyward: Keyward | undefined;
let work: string;
let walk: { code: number | null; output: string };
let vars: { url: string; t: string; org: string; key: string };

beforeAll(async () => {
  const absent = missing();
  if (absent.length > 0) {
    throw new Error(`The README walk-through test needs ${absent.join(", ")}: apt-get install -y openssh-server curl jq (as root)`);
  }
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const blocks = firstHourBlocks(readme);
  for (const line of [README_URL_LINE, README_SSH_PORT_LINE]) {
    const found = blocks.run.join("\n").split("\n").filter((l) => l.trim() === line);
    if (found.length !== 1) throw new Error(`Your first hour must set ${line} exactly once in a block that runs (found ${found.length})`);
  }

  // The walk-through's home directory: the server's log is ~/keyward.log there.
  work = mkdtempSync(join(tmpdir(), "kw-readme-walk-"));
  keyward = await startKeyward(join(work, "keyward.log"));
  const sshPort = await freePort();
  // The local sshd runs as whoever runs the test; as root, sshd wants its privilege-separation directory.
  if (process.getuid?.() === 0) mkdirSync("/run/sshd", { recursive: true });
  const rewrite = (l: string) =>
    l.trim() === README_URL_LINE ? l.replace(":8080", `:${keyward!.port}`) : l.trim() === README_SSH_PORT_LINE ? l.replace("2222", String(sshPort)) : l;
  const script = [
    ...blocks.run.map((b) => b.split("\n").map(rewrite).join("\n")),
    // Not from the README: hand the walk-through's values to the assertions below.
    `jq -n --arg url "$URL" --arg t "$T" --arg org "$ORG" --arg key "$KEY" '{url: $url, t: $t, org: $org, key: $key}' > ../vars.json`,
  ].join("\n\n");
  // The walk-through runs in an empty directory; the script and the values sit beside it.
  const scriptPath = join(work, "walkthrough.sh");
  writeFileSync(scriptPath, script + "\n");
  const dir = join(work, "demo");
  mkdirSync(dir);
  walk = await runBash(scriptPath, dir, work, 120_000);
  if (walk.code === 0) vars = JSON.parse(readFileSync(join(work, "vars.json"), "utf8"));
}, 240_000);

afterAll(async () => {
  await keyward?.stop();
});

describe("README: Your first hour", () => {
  it("has the steps the issue asks for, and skips only the blocks marked as happening elsewhere", () => {
    const blocks = firstHourBlocks(readFileSync(join(ROOT, "README.md"), "utf8"));
    const all = blocks.run.join("\n");
    for (const step of ["/auth/register", "/auth/login", "/auth/verify-email", "~/keyward.log", "/organizations", "/cas", "/principals", "ssh-keygen -t ed25519 -f ./kw-demo -N ''", "/ssh/keys", "ssh-keygen -Y sign -n file", "/ssh/sign", "ssh-keygen -L -f ./kw-demo-cert.pub", "/ssh/ca-keys", "TrustedUserCAKeys=\"$PWD/keyward_user_ca.pub\""]) {
      expect(all, step).toContain(step);
    }
    expect(blocks.skipped.length).toBeGreaterThan(0);
    expect(blocks.skipped.some((b) => b.includes("npm start"))).toBe(true);
    for (const b of blocks.skipped) expect(b.trimStart()).toMatch(/^#\s*\(/);
  });

  it("runs as written against a live Keyward and leaves a certificate for the principal", () => {
    expect(walk.code, `walk-through failed:\n${walk.output}\n--- server ---\n${keyward?.output()}`).toBe(0);
    // The server is the one the suite's mode asks for.
    const banner = keyward!.output().split("\n").find((l) => l.startsWith("Keyward is listening"))!;
    expect(banner).toContain(inject("pgTemplate") ? "database: PostgreSQL" : "database: embedded PGlite in");
    expect(banner).toContain(process.env.REDIS_URL ? "sessions: Redis" : "sessions: in-process");
    const demo = join(work, "demo");
    for (const f of ["kw-demo", "kw-demo.pub", "challenge.txt.sig", "kw-demo-cert.pub", "keyward_user_ca.pub"]) expect(existsSync(join(demo, f)), f).toBe(true);

    const listing = spawnSync("ssh-keygen", ["-L", "-f", join(demo, "kw-demo-cert.pub")], { encoding: "utf8" });
    expect(listing.status, listing.stderr).toBe(0);
    expect(listing.stdout).toContain("user certificate");
    expect(listing.stdout).toContain('Key ID: "me@example.com [org:');
    expect(listing.stdout).toMatch(/Principals:\s+deploy\s*\n\s*Critical Options/);
    expect(listing.stdout).toMatch(/Valid: from \S+ to \S+/);
  });

  it("fetched the organization's CA line for TrustedUserCAKeys, and the certificate is signed by it", async () => {
    expect(walk.code).toBe(0);
    const res = await fetch(`http://127.0.0.1:${keyward!.port}/api/v1/organizations/${vars.org}/cas`, { headers: { authorization: `Bearer ${vars.t}` } });
    expect(res.status).toBe(200);
    const cas = ((await res.json()) as { data: { cas: Array<{ ca_type: string; public_key: string; fingerprint: string }> } }).data.cas;
    expect(cas).toHaveLength(1);
    const ca = cas[0]!;
    expect(ca.ca_type).toBe("user");
    expect(readFileSync(join(work, "demo", "keyward_user_ca.pub"), "utf8")).toBe(`${ca.public_key}\n`);
    const listing = spawnSync("ssh-keygen", ["-L", "-f", join(work, "demo", "kw-demo-cert.pub")], { encoding: "utf8" }).stdout;
    expect(listing).toContain(`Signing CA: ED25519 ${ca.fingerprint}`);
    expect(vars.url).toBe(`http://localhost:${keyward!.port}`);
  });

  it("signed in to the walk-through's own loopback sshd, started as the user running it, with the certificate", () => {
    expect(walk.code).toBe(0);
    const me = spawnSync("id", ["-un"], { encoding: "utf8" }).stdout.trim();
    expect(walk.output).toContain(`signed in as ${me}`);
    expect(readFileSync(join(work, "demo", "sshd.log"), "utf8")).toMatch(/Accepted certificate ID "me@example\.com \[org:[^\]]+\]"/);
  });

  it("the certificate logs in to a real sshd that trusts keyward_user_ca.pub", async () => {
    expect(walk.code).toBe(0);
    const demo = join(work, "demo");
    const hostKey = join(work, "ssh_host_ed25519_key");
    spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", hostKey]);
    const krl = join(work, "org.krl");
    const krlRes = await fetch(`http://127.0.0.1:${keyward!.port}/api/v1/organizations/${vars.org}/ssh/krl`);
    expect(krlRes.status).toBe(200);
    writeFileSync(krl, Buffer.from(await krlRes.arrayBuffer()));
    // This machine has no "deploy" account: map the principal to root, as AuthorizedPrincipalsFile
    // does on a server whose accounts are named otherwise (the README mentions both ways).
    const principals = join(work, "principals");
    writeFileSync(principals, "deploy\n");
    const sshd = await startSshd({
      trustedUserCaKeys: readFileSync(join(demo, "keyward_user_ca.pub"), "utf8"),
      hostKeyPath: hostKey,
      krlPath: krl,
      extraConfig: [`AuthorizedPrincipalsFile ${principals}`],
    });
    try {
      const login = sshd.login("root", join(demo, "kw-demo"), join(demo, "kw-demo-cert.pub"));
      expect(login.status, `${login.stderr}\n${sshd.log()}`).toBe(0);
      expect(await sshd.waitForLog(/Accepted certificate ID "me@example\.com \[org:[^\]]+\]"/)).toBe(true);
    } finally {
      sshd.stop();
    }
  });
});
