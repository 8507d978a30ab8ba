import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { connectPostgres } from "../../src/infra/db.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { atSeq, seedChain, tamper } from "../helpers/audit-chain.js";
import { withDatabase } from "../helpers/global-setup.js";

/**
 * `npm run audit:verify` as an operator runs it beside the service, on the same database (a
 * PostgreSQL database of its own, or an embedded one on disk): exit 0 on an intact chain, non-zero
 * naming the first broken link after tampering.
 */
const KEYS = `k1:${randomBytes(32).toString("base64")}`;
let storage: Record<string, string>;
let dropDatabase: () => Promise<void> = async () => {};

beforeAll(async () => {
  const template = inject("pgTemplate");
  const baseUrl = process.env.DATABASE_URL;
  if (baseUrl && template) {
    const name = `keyward_auditverify_${process.pid}`;
    const admin = connectPostgres(baseUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${name}"`);
    await admin.unsafe(`create database "${name}" template "${template}"`);
    await admin.end();
    storage = { DATABASE_URL: withDatabase(baseUrl, name) };
    dropDatabase = async () => {
      const a = connectPostgres(baseUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists "${name}" with (force)`);
      await a.end();
    };
  } else {
    storage = { DATA_DIR: join(mkdtempSync(join(tmpdir(), "kw-auditverify-")), "data") };
  }
});
afterAll(() => dropDatabase());

const withApp = async (fn: (app: TestApp) => Promise<void>) => {
  const app = await startTestApp({ ...storage, ENCRYPTION_KEYS: KEYS });
  try {
    await fn(app);
  } finally {
    await app.close();
  }
};

function verifyTask(args: string[] = []): Promise<{ code: number | null; out: string }> {
  const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: "test", LOG_LEVEL: "silent", ENCRYPTION_KEYS: KEYS, SESSION_SECRET: "x".repeat(40) };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  const child = spawn(process.execPath, ["--import", "tsx", "src/tasks/audit-verify.ts", ...args], { env: { ...env, ...storage }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, out })));
}

describe("npm run audit:verify", () => {
  let edited: string;

  it("exits 0 on an intact chain, reporting what it checked", async () => {
    await withApp((app) => seedChain(app, 12, [null, "00000000-0000-4000-8000-00000000000a"]));
    const run = await verifyTask(["--chain-first"]);
    expect(run.out).toContain("Audit chains intact.");
    expect(run.out).toMatch(/1 organization chain\(s\) checked, 0 broken/);
    expect(run.code).toBe(0);
  }, 60_000);

  it("exits 1 naming the first broken link once a record is edited", async () => {
    await withApp(async (app) => {
      edited = (await atSeq(app, 4)).id;
      await tamper(app, sql`update audit_logs set action = 'user.logout' where id = ${edited}`);
    });
    const run = await verifyTask();
    expect(run.out).toContain(`FIRST BROKEN LINK: chain global, seq 4, record ${edited}: edited`);
    expect(run.code).toBe(1);
    const json = await verifyTask(["--json"]);
    expect(JSON.parse(json.out).firstBreak).toMatchObject({ chain: "global", seq: 4, recordId: edited, kind: "edited" });
    expect(json.code).toBe(1);
  }, 60_000);

  it("refuses unknown arguments", async () => {
    expect((await verifyTask(["--nope"])).code).toBe(2);
  });
});
