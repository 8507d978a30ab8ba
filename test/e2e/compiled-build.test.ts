import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execForm, readDockerfile } from "../helpers/dockerfile.js";
import { freePort, killServerProcesses, startServerProcess, stopServerProcess, untilListening } from "../helpers/server-process.js";

/**
 * Production runs compiled JavaScript, not a TypeScript loader: `npm run build:server` (the server
 * half of `npm run build`) compiles, and `node dist/src/main.js` starts in production mode, serves
 * the REST shim, GraphQL (decorator metadata survives compilation), the OIDC provider and the
 * pages, and stops cleanly on SIGTERM.
 */
const run = promisify(execFile);
afterAll(killServerProcesses);

beforeAll(async () => {
  await run("npm", ["run", "--silent", "build:server"], { timeout: 170_000 });
}, 180_000);

describe("the compiled build", () => {
  it("starts in production mode with no warning, answers every door, and stops on SIGTERM", async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const server = startServerProcess(["dist/src/main.js"], {
      NODE_ENV: "production",
      PORT: String(port),
      PUBLIC_URL: origin,
      DATA_DIR: join(mkdtempSync(join(tmpdir(), "kw-dist-")), "data"),
      SESSION_SECRET: randomBytes(32).toString("base64"),
      ENCRYPTION_KEYS: `k1:${randomBytes(32).toString("base64")}`,
      EMAIL_PROVIDER: "smtp",
    });
    await untilListening(server);

    expect((await fetch(`${origin}/api/health`)).status).toBe(200);
    expect((await fetch(`${origin}/api/ready`)).status).toBe(200);
    const gql = await fetch(`${origin}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ __typename }" }) });
    expect(await gql.json()).toEqual({ data: { __typename: "Query" } });
    const discovery = (await (await fetch(`${origin}/.well-known/openid-configuration`)).json()) as { issuer: string };
    expect(discovery.issuer).toBe(origin);
    expect((await fetch(`${origin}/login`)).status).toBe(200);
    const registered = await fetch(`${origin}/api/v1/auth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "dist@example.com", password: "correct horse battery staple", name: "Dist" }),
    });
    expect(registered.status).toBe(201);

    // The image's own health command (Dockerfile HEALTHCHECK) passes against it, and fails once it stops.
    const [cmd, ...args] = execForm(readDockerfile().at(-1)!.instructions.find((i) => i.op === "HEALTHCHECK")!.args);
    const health = () => run(cmd === "node" ? process.execPath : cmd!, args, { env: { ...process.env, PORT: String(port) } }).then(() => 0, (e: { code: number }) => e.code);
    expect(await health()).toBe(0);

    expect(await stopServerProcess(server)).toBe(0);
    expect(await health()).toBe(1);
    // Only the banner: no configuration warning, and on a supported runtime (Node.js 22 or 24) no
    // runtime warning from a dependency either (on an older Node, oidc-provider's own notice that
    // the runtime is unsupported is the one line expected).
    const supported = Number(process.versions.node.split(".")[0]) >= 22;
    const lines = server.output().split("\n").filter((l) => l.trim() !== "" && !l.startsWith("Keyward is listening"));
    expect(lines.filter((l) => supported || !l.includes("Unsupported runtime"))).toEqual([]);
  }, 120_000);
});
