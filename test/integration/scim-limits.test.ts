import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { scimClient, scimError, type ScimClient } from "../helpers/scim.js";

/**
 * Issue 36: /scim/v2 is rate limited per address (the edge) and per API key, and a limited client
 * gets a SCIM error (RFC 7644 §3.12) with Retry-After, as Okta and Entra ID back off on. Behind a
 * trusted proxy each request comes from another address here, so the key's own limit is what trips.
 */
// Above what setting up the two clients spends from the test's own address.
const LIMIT = 40;
let app: TestApp;
let a: ScimClient;
let b: ScimClient;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_API_IP: `${LIMIT}/60`, TRUST_PROXY: "true" });
  [a, b] = [await scimClient(app), await scimClient(app)];
});
afterAll(() => app?.close());

let ip = 10;
const from = (c: ScimClient) => c.request("GET", "/Users", undefined, { "x-forwarded-for": `203.0.113.${ip++}` });

/**
 * The limits count in fixed windows aligned on the clock (here every minute): requests that
 * straddle a window's end count in two windows and trip nothing (it failed so once in CI). Each
 * test starts in a fresh window, with at least half of it left.
 */
function freshWindow(seconds: number): void {
  const left = seconds * 1000 - (app.clock.now().getTime() % (seconds * 1000));
  if (left < (seconds * 1000) / 2) app.clock.advance(Math.ceil(left / 1000) + 1);
}

describe("SCIM rate limits", () => {
  it("answers 429 in the SCIM error schema with Retry-After once a key spent its limit, per key", async () => {
    freshWindow(60);
    const answers = [];
    for (let i = 0; i < LIMIT + 2; i++) answers.push(await from(a));
    expect(answers.slice(0, LIMIT).map((r) => r.status)).toEqual(Array(LIMIT).fill(200));
    for (const limited of answers.slice(LIMIT)) {
      expect(scimError(limited)).toEqual([429, undefined]);
      expect(limited.headers.get("content-type")).toMatch(/^application\/scim\+json/);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // Another organization's key, from fresh addresses, is not limited by A's spending.
    expect((await from(b)).status).toBe(200);
  });

  it("limits one address whatever the key, before authentication (a guessing client)", async () => {
    freshWindow(60);
    const fixed = { "x-forwarded-for": "198.51.100.7" };
    const statuses = [];
    for (let i = 0; i < LIMIT + 2; i++) statuses.push((await app.http.request("GET", "/scim/v2/Users", { token: `kwk_guess${i}`, headers: fixed })).status);
    expect(statuses.slice(0, LIMIT).every((s) => s === 401)).toBe(true);
    const limited = await app.http.request("GET", "/scim/v2/Users", { token: "kwk_guess", headers: fixed });
    expect(scimError(limited)).toEqual([429, undefined]);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
