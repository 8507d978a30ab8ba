import * as oc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode, toFailure } from "../../src/cli/errors.js";
import { deviceLogin } from "../../src/cli/login-device.js";
import { colorsFor, type Io } from "../../src/cli/output.js";
import { listenLoopback, readBody } from "../helpers/loopback-server.js";

/**
 * The device flow's waiting loop against a scripted authorization server: it keeps polling through
 * authorization_pending and slow_down (slowing down), and ends on approval, denial or expiry with
 * the right exit code.
 */
let script: Array<{ status: number; body: Record<string, unknown> }> = [];
let expiresIn = 60;
const polls: number[] = [];
let server: Awaited<ReturnType<typeof listenLoopback>>;

beforeAll(async () => {
  server = await listenLoopback("fake AS", async (req, res) => {
    const form = new URLSearchParams(await readBody(req));
    res.setHeader("content-type", "application/json");
    if (req.url === "/device") {
      res.end(JSON.stringify({ device_code: "dc", user_code: "ABCD-EFGH", verification_uri: `${server.url}/activate`, expires_in: expiresIn, interval: 1 }));
      return;
    }
    polls.push(Date.now());
    expect(form.get("grant_type")).toBe("urn:ietf:params:oauth:grant-type:device_code");
    expect(form.get("resource")).toBe("http://api.test/api/v1");
    const next = script.shift() ?? { status: 400, body: { error: "authorization_pending" } };
    res.statusCode = next.status;
    res.end(JSON.stringify(next.body));
  });
});
afterAll(() => server?.close());

function config(): oc.Configuration {
  const c = new oc.Configuration({ issuer: server.url, token_endpoint: `${server.url}/token`, device_authorization_endpoint: `${server.url}/device` }, "keyward-cli", { token_endpoint_auth_method: "none" }, oc.None());
  oc.allowInsecureRequests(c);
  return c;
}

const lines: string[] = [];
const io: Io = { json: false, out: colorsFor({}), err: colorsFor({}), stdout: () => {}, stderr: (t) => void lines.push(t), interactive: false };
const pending = { status: 400, body: { error: "authorization_pending" } };

describe("device flow", () => {
  it("shows the code, waits through pending and slow_down (polling slower), and returns the tokens", async () => {
    polls.length = 0;
    script = [pending, { status: 400, body: { error: "slow_down" } }, { status: 200, body: { access_token: "at", token_type: "Bearer", expires_in: 300, refresh_token: "rt" } }];
    const tokens = await deviceLogin(config(), io, "http://api.test/api/v1");
    expect(tokens.access_token).toBe("at");
    expect(lines.join("\n")).toContain("enter the code ABCD-EFGH");
    expect(polls).toHaveLength(3);
    // After slow_down the interval grew by 5 s (RFC 8628 §3.5).
    expect(polls[2]! - polls[1]!).toBeGreaterThanOrEqual(5500);
  }, 20_000);

  it("ends with exit code 3 when the user denies", async () => {
    script = [pending, { status: 400, body: { error: "access_denied" } }];
    const f = toFailure(await deviceLogin(config(), io, "http://api.test/api/v1").catch((e: unknown) => e));
    expect(f).toMatchObject({ exitCode: ExitCode.AUTH, message: "Sign-in was denied" });
  }, 10_000);

  it("ends with exit code 3 when the code expires, said by the server or by the clock", async () => {
    script = [{ status: 400, body: { error: "expired_token" } }];
    expect(toFailure(await deviceLogin(config(), io, "http://api.test/api/v1").catch((e: unknown) => e))).toMatchObject({ exitCode: ExitCode.AUTH, type: "EXPIRED_TOKEN" });
    expiresIn = 2;
    script = [];
    const f = toFailure(await deviceLogin(config(), io, "http://api.test/api/v1").catch((e: unknown) => e));
    expiresIn = 60;
    expect(f).toMatchObject({ exitCode: ExitCode.AUTH, type: "EXPIRED_TOKEN" });
    expect(f.message).toContain("expired");
  }, 10_000);
});
