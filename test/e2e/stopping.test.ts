import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/server-process.js";
import { makeKey } from "../factories/ssh.js";

/**
 * Stopping `npm start` the ways a person does: SIGTERM to the process `npm start` is (a script,
 * systemd, `kill`), and Ctrl-C in its terminal, which sends SIGINT to the whole foreground process
 * group. Either way the server it runs stops with it: nothing is left holding the port or the
 * embedded database's lock, and requests already in flight are answered first.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const started: ChildProcess[] = [];

afterAll(() => {
  // Whatever a failed test left: the whole group of each `npm start`.
  for (const c of started) {
    try {
      process.kill(-c.pid!, "SIGKILL");
    } catch {
      /* gone */
    }
  }
});

interface NpmStart {
  npm: ChildProcess;
  port: number;
  data: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** `npm start` in its own process group (as a terminal runs it), on the embedded default. */
async function npmStart(): Promise<NpmStart> {
  const port = await freePort();
  const data = join(mkdtempSync(join(tmpdir(), "kw-stop-")), "data");
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}` };
  for (const k of ["DATABASE_URL", "REDIS_URL", "REDIS_KEY_PREFIX", "PUBLIC_URL", "APP_URL", "HOST", "SESSION_SECRET", "ENCRYPTION_KEYS"]) delete env[k];
  Object.assign(env, { NODE_ENV: "development", LOG_LEVEL: "info", PORT: String(port), DATA_DIR: data, RATE_LIMIT_ENABLED: "false", SSH_REQUIRE_VERIFIED_KEYS: "false", SMTP_HOST: "127.0.0.1", SMTP_PORT: "1" });
  const npm = spawn("npm", ["start"], { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  started.push(npm);
  let out = "";
  npm.stdout!.on("data", (d) => (out += d));
  npm.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((r) => npm.once("exit", (code) => r(code)));
  for (let i = 0; i < 1200 && !out.includes("Keyward is listening"); i++) {
    if (npm.exitCode !== null) throw new Error(`npm start exited early:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!out.includes("Keyward is listening")) throw new Error(`not listening after 120 s:\n${out}`);
  return { npm, port, data, output: () => out, exited };
}

/** True while any process of the group `npm start` leads is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

const portOpen = (port: number) =>
  new Promise<boolean>((done) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => (s.destroy(), done(true)));
    s.once("error", () => done(false));
  });

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) if (await check()) return true;
  return check();
}

/** Everything `npm start` started has ended: no process of its group, the port closed, the lock released. */
async function expectNothingLeft(s: NpmStart): Promise<void> {
  expect(await until(() => !groupAlive(s.npm.pid!), 15_000), `a process of npm start's group outlived it:\n${s.output()}`).toBe(true);
  expect(await portOpen(s.port)).toBe(false);
  expect(existsSync(join(s.data, "keyward.lock"))).toBe(false);
}

const headers = { "content-type": "application/json" };

async function call(base: string, method: string, path: string, body: unknown, token?: string) {
  const res = await fetch(`${base}${path}`, { method, headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = (await res.json()) as { data: Record<string, any>; message: string };
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${json.message}`);
  return json.data;
}

/**
 * What the newcomer had in flight: an organization's owner with a CA, a principal and a key, ready
 * to sign; and credentials to sign in with. The address is verified from the development log, as
 * the README's first hour does it.
 */
async function readyToSign(s: NpmStart): Promise<{ token: string; credentials: string; sign: string }> {
  const base = `http://127.0.0.1:${s.port}`;
  const email = `stop.${Date.now()}@example.com`;
  const credentials = JSON.stringify({ email, password: "a long enough password 1" });
  await call(base, "POST", "/api/v1/auth/register", JSON.parse(credentials));
  let token: string | undefined;
  await until(() => Boolean((token = new RegExp(`"to":"${email.replace(/\./g, "\\.")}".*?verify-email\\?token=([A-Za-z0-9_-]+)`).exec(s.output())?.[1])), 30_000);
  await call(base, "POST", "/api/v1/auth/verify-email", { token });
  const session = (await call(base, "POST", "/api/v1/auth/login", JSON.parse(credentials))).token as string;
  const org = (await call(base, "POST", "/api/v1/organizations", { name: "Stopping" }, session)).organization.id as string;
  await call(base, "POST", `/api/v1/organizations/${org}/cas`, { name: "Users" }, session);
  const principal = (await call(base, "POST", `/api/v1/organizations/${org}/principals`, { name: "deploy" }, session)).principal.id as string;
  await call(base, "POST", `/api/v1/organizations/${org}/principals/${principal}/members`, { email }, session);
  const key = await call(base, "POST", "/api/v1/ssh/keys", { key: makeKey().pub }, session);
  return { token: session, credentials, sign: JSON.stringify({ key_id: key.id, org_id: org, principals: ["deploy"] }) };
}

/**
 * Requests in flight: certificate signings, and sign-ins (each spends tens of milliseconds in
 * argon2id, so when the first answer is back the others are still being served). Each goes on a
 * connection of its own; `sent` resolves once every request has been written whole (so each is in
 * flight, not merely planned, when the signal goes: on a busy machine a fetch may not have connected
 * yet, and a connection begun after Ctrl-C is rightly refused).
 */
function inFlight(base: string, ready: { token: string; credentials: string; sign: string }): { sent: Promise<unknown>; all: Promise<number[]>; answered: () => number } {
  const { port } = new URL(base);
  const written: Promise<void>[] = [];
  let answered = 0;
  const post = (path: string, body: string, token?: string) =>
    new Promise<number>((resolve) => {
      const req = request({ host: "127.0.0.1", port, path, method: "POST", agent: false, headers: { ...headers, "content-length": Buffer.byteLength(body), ...(token ? { authorization: `Bearer ${token}` } : {}) } });
      written.push(new Promise((w) => req.once("finish", () => w()).once("error", () => w())));
      req.once("response", (res) => {
        res.resume();
        res.once("end", () => {
          answered++;
          resolve(res.statusCode ?? 0);
        });
      });
      req.once("error", () => resolve(0));
      req.end(body);
    });
  const requests = [
    ...Array.from({ length: 6 }, () => post("/api/v1/ssh/sign", ready.sign, ready.token)),
    ...Array.from({ length: 8 }, () => post("/api/v1/auth/login", ready.credentials)),
  ];
  return { sent: Promise.all(written), all: Promise.all(requests), answered: () => answered };
}

describe("stopping npm start", () => {
  it("SIGTERM to the process npm start is stops the server it runs: no orphan keeps the port or the data lock", async () => {
    const s = await npmStart();
    const server = Number(readFileSync(join(s.data, "keyward.lock"), "utf8"));
    expect(server).toBeGreaterThan(0);
    s.npm.kill("SIGTERM");
    await s.exited;
    await expectNothingLeft(s);
    // The server process itself is gone, not merely detached from npm.
    expect(() => process.kill(server, 0)).toThrow();
  }, 240_000);

  it("Ctrl-C (SIGINT to the terminal's process group) answers the requests in flight before it stops, as SIGTERM does", async () => {
    const s = await npmStart();
    const base = `http://127.0.0.1:${s.port}`;
    const { sent, all, answered } = inFlight(base, await readyToSign(s));
    await sent;
    process.kill(-s.npm.pid!, "SIGINT");
    // Eight argon2id sign-ins are not all done the moment the last request is written.
    expect(answered()).toBeLessThan(14);
    // The newcomer's burst lost 2 of 6 signings to Ctrl-C: every one is answered now.
    const got = await all;
    expect(got, s.output().slice(-4000)).toEqual([...Array(6).fill(201), ...Array(8).fill(200)]);
    await s.exited;
    await expectNothingLeft(s);
    expect(s.output()).toContain('"signal":"SIGINT"');
    expect(s.output()).not.toMatch(/"level":50|uncaught/);
  }, 240_000);
});
