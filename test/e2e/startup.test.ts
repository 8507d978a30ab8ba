import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lockDataDir } from "../../src/infra/dir-lock.js";
import { startFakePostgres } from "../helpers/fake-postgres.js";
import { freePort, killServerProcesses, startServerProcess, stopServerProcess, untilListening, type ServerProcess } from "../helpers/server-process.js";

/**
 * `npm start` as a newcomer runs it, as a real process: the banner says where it listens and what
 * it uses; a second start on the same data directory or port fails at once saying why; keys that
 * cannot open existing data are named, with what to do, not a crypto stack trace.
 */
const key = () => randomBytes(32).toString("base64");
const K1 = key();
const start = (env: Record<string, string>): ServerProcess => startServerProcess(["--import", "tsx", "src/main.ts"], env);
// Says, when sent SIGUSR2, whether Node's bundled undici (fetch's code) has been loaded (src/main.ts).
const UNDICI_PROBE = `data:text/javascript,process.on("SIGUSR2",()=>process.stderr.write("undici loaded: "+process.moduleLoadList.some((m)=>m.includes("undici"))+"\\n"))`;
const stop = stopServerProcess;
const children: ChildProcess[] = [];

afterAll(() => {
  killServerProcesses();
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

describe("npm start", () => {
  const dir = mkdtempSync(join(tmpdir(), "kw-start-"));
  const data = join(dir, "data");

  it("says in one line where it listens, what it uses and what to do next; a second start fails at once", async () => {
    const port = await freePort();
    // HOST unset (empty is unset): the embedded default listens on this machine only.
    const first = startServerProcess(["--import", UNDICI_PROBE, "--import", "tsx", "src/main.ts"], { PORT: String(port), DATA_DIR: data, ENCRYPTION_KEYS: `k1:${K1}`, HOST: "" });
    await untilListening(first);
    // Nothing at start loads fetch's code (a static import of node:http did: 1.5–2.5 MB resident).
    first.child.kill("SIGUSR2");
    await expect.poll(() => first.output()).toContain("undici loaded:");
    expect(first.output()).toContain("undici loaded: false");
    const banner = first.output().split("\n").find((l) => l.startsWith("Keyward is listening"))!;
    expect(banner).toContain(`on 127.0.0.1:${port},`);
    expect(banner).toContain(`embedded PGlite in ${data}`);
    expect(banner).toContain("sessions: in-process");
    expect(banner).toMatch(/\/register.*\/login/);
    expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);

    // The same data directory: refused before anything is opened.
    const second = start({ PORT: String(await freePort()), DATA_DIR: data, ENCRYPTION_KEYS: `k1:${K1}` });
    expect(await second.exited, second.output()).toBe(1);
    expect(second.output()).toContain(`The data directory ${data} is in use by another Keyward process (pid ${first.child.pid})`);
    expect(second.output()).not.toContain("    at ");

    // The same port, another directory: refused, nothing left listening or locked.
    const other = join(dir, "other");
    const third = start({ PORT: String(port), DATA_DIR: other, ENCRYPTION_KEYS: `k1:${K1}` });
    expect(await third.exited, third.output()).toBe(1);
    expect(third.output()).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    expect(third.output()).not.toContain("Keyward is listening");
    expect(existsSync(join(other, "keyward.lock"))).toBe(false);

    // The first one is still serving.
    expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);
    await stop(first);
    expect(existsSync(join(data, "keyward.lock"))).toBe(false);
  }, 180_000);

  it("names the encryption key that cannot open existing data, and how to keep it", async () => {
    // Same id, other bytes.
    const changed = start({ PORT: String(await freePort()), DATA_DIR: data, ENCRYPTION_KEYS: `k1:${key()}` });
    expect(await changed.exited, changed.output()).toBe(1);
    expect(changed.output()).toContain(`Data sealed under encryption key "k1" cannot be opened with the key ENCRYPTION_KEYS now gives that id`);
    expect(changed.output()).not.toContain("Unsupported state or unable to authenticate data");

    // The old key dropped instead of kept behind the new one.
    const replaced = start({ PORT: String(await freePort()), DATA_DIR: data, ENCRYPTION_KEYS: `k2:${key()}` });
    expect(await replaced.exited, replaced.output()).toBe(1);
    expect(replaced.output()).toContain(`ENCRYPTION_KEYS lists "k2" but not "k1". Keep the old key after the new one`);
    expect(replaced.output()).not.toContain("    at ");

    // Rotated as told: starts.
    const rotated = start({ PORT: String(await freePort()), DATA_DIR: data, ENCRYPTION_KEYS: `k2:${key()},k1:${K1}` });
    await untilListening(rotated);
    await stop(rotated);
  }, 180_000);
});

describe("a start that cannot work says why, at once", () => {
  it("lists every bad variable in one pass, and refuses a URL without its scheme or a database that is not PostgreSQL", async () => {
    const three = start({ NODE_ENV: "prod", LOG_LEVEL: "verbose", SESSION_SECRET: "short" });
    expect(await three.exited, three.output()).toBe(2);
    for (const name of ["NODE_ENV", "LOG_LEVEL", "SESSION_SECRET"]) expect(three.output()).toContain(`  - ${name}: `);
    const scheme = start({ PUBLIC_URL: "localhost:8080", DATABASE_URL: "mysql://keyward:pw@db/keyward" });
    expect(await scheme.exited, scheme.output()).toBe(2);
    expect(scheme.output()).toContain("PUBLIC_URL: must be an http:// or https:// URL");
    expect(scheme.output()).toContain("DATABASE_URL: must be a PostgreSQL URL");
    expect(scheme.output()).not.toContain("    at ");
  }, 120_000);

  it("names a DATABASE_URL whose database does not exist, and how to create it", async () => {
    const pg = await startFakePostgres((s) => ({ code: "3D000", message: `database "${s.database}" does not exist` }));
    try {
      const missing = start({ PORT: String(await freePort()), DATABASE_URL: `postgres://keyward:hunter2secret@127.0.0.1:${pg.port}/keyward_prod` });
      // Not an outage to wait out (75): someone has to create it.
      expect(await missing.exited, missing.output()).toBe(1);
      const out = missing.output();
      expect(out).toContain(`The database "keyward_prod" does not exist on the PostgreSQL server at 127.0.0.1:${pg.port}/keyward_prod (DATABASE_URL)`);
      expect(out).toContain(`createdb -h 127.0.0.1 -p ${pg.port} -U keyward keyward_prod`);
      expect(out).not.toContain("hunter2secret");
      expect(out).not.toContain("    at ");
      expect(out).not.toContain("Keyward is listening");
      expect(pg.startups[0]).toMatchObject({ user: "keyward", database: "keyward_prod" });
    } finally {
      await pg.close();
    }
  }, 120_000);

  it("stops the start naming REDIS_URL when Redis does not answer, instead of a happy banner and 503 on every sign-in", async () => {
    const data = join(mkdtempSync(join(tmpdir(), "kw-redis-")), "data");
    const closed = await freePort();
    const down = start({ PORT: String(await freePort()), DATA_DIR: data, REDIS_URL: `redis://:s3cretpass@127.0.0.1:${closed}/0` });
    // A dependency that is down: exit EX_TEMPFAIL for the supervisor to start it again later.
    expect(await down.exited, down.output()).toBe(75);
    const out = down.output();
    expect(out).toContain(`keyward: Redis is not reachable at 127.0.0.1:${closed}/0 (REDIS_URL): ECONNREFUSED; exiting to be started again.`);
    expect(out).not.toContain("s3cretpass");
    expect(out).not.toContain("Keyward is listening");
    // The embedded database it had opened is closed again: its lock does not outlive the process.
    expect(existsSync(join(data, "keyward.lock"))).toBe(false);
  }, 120_000);
});

describe("the data directory lock", () => {
  it("takes over a lock whose process is gone (a crash), and refuses a live one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kw-lock-"));
    const gone = spawn(process.execPath, ["-e", "0"]);
    await new Promise((r) => gone.once("exit", r));
    writeFileSync(join(dir, "keyward.lock"), String(gone.pid));
    const lock = lockDataDir(dir);
    expect(existsSync(join(dir, "keyward.lock"))).toBe(true);

    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"]);
    children.push(holder);
    lock.release();
    writeFileSync(join(dir, "keyward.lock"), String(holder.pid));
    expect(() => lockDataDir(dir)).toThrow(`in use by another Keyward process (pid ${holder.pid})`);
    holder.kill();
  });
});
