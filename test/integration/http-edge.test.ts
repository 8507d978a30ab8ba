import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { sessionCookie } from "../helpers/http.js";
import { countRows } from "../helpers/db.js";
import { login, newUser, registerUser, uniqueEmail } from "../factories/users.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ BODY_LIMIT: "2kb", CORS_ORIGINS: "https://*.example.com,https://app.partner.test" });
});
afterAll(() => app?.close());

const envelopeError = (body: any) => ({
  version: body.version,
  success: body.success,
  type: body.error?.type,
  hasRequestId: typeof body.request_id === "string" && body.request_id.length > 0,
});

describe("the REST envelope on errors", () => {
  it("answers unknown routes with 404 NOT_FOUND", async () => {
    const res = await app.http.get("/api/v1/no/such/route");
    expect(res.status).toBe(404);
    expect(envelopeError(res.body)).toEqual({ version: "1.0", success: false, type: "NOT_FOUND", hasRequestId: true });
    expect((await app.http.get("/nothing-here")).body.error.type).toBe("NOT_FOUND");
    // Under a known first segment too (each segment's routes are a router of their own), naming the whole path.
    const deep = await app.http.get("/api/v1/organizations/00000000-0000-4000-8000-000000000000/no-such-thing");
    expect(deep.status).toBe(404);
    expect(deep.body).toMatchObject({ message: "No route for GET /api/v1/organizations/00000000-0000-4000-8000-000000000000/no-such-thing", error: { type: "NOT_FOUND" } });
  });

  it("answers a known path with the wrong method with 405 and Allow", async () => {
    const res = await app.http.request("PUT", "/api/v1/auth/login");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(envelopeError(res.body).type).toBe("METHOD_NOT_ALLOWED");
    const sign = await app.http.request("PUT", "/api/v1/ssh/sign");
    expect([sign.status, sign.headers.get("allow")]).toEqual([405, "POST"]);
    // The document itself is a documented path too (found by the fuzz: it answered 404).
    const doc = await app.http.post("/api/v1/openapi.json", {});
    expect(doc.status).toBe(405);
    expect(doc.headers.get("allow")).toBe("GET, HEAD");
    expect(envelopeError(doc.body).type).toBe("METHOD_NOT_ALLOWED");
  });

  it("answers malformed JSON with 400 and writes nothing", async () => {
    const before = await countRows(app, "users");
    const res = await app.http.request("POST", "/api/v1/auth/register", { rawBody: '{"email": "x@example.com", "password": ' });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe("INVALID_JSON");
    expect(await countRows(app, "users")).toBe(before);
  });

  it("reads JSON bodies the same whichever reader takes them (plain UTF-8, a BOM, other spellings, gzip)", async () => {
    const login = (rawBody: string | Uint8Array, headers: Record<string, string> = {}) =>
      app.http.request("POST", "/api/v1/auth/login", { rawBody: rawBody as string, headers: { "content-type": "application/json", ...headers } });
    const body = JSON.stringify({ email: "nobody@example.com", password: "not the password" });
    // Parsed: the credentials are wrong (401), not the body (400).
    expect((await login(body)).status).toBe(401);
    expect((await login(`\ufeff${body}`)).status).toBe(401);
    expect((await login(body, { "content-type": "Application/JSON; charset=UTF-8" })).status).toBe(401);
    expect((await login(gzipSync(body), { "content-encoding": "gzip" })).status).toBe(401);
    // Empty is {} (then a validation error); a bare string at the top level is not JSON here.
    const empty = await login("");
    expect([empty.status, empty.body.error.type]).toEqual([400, "VALIDATION_ERROR"]);
    for (const raw of ['"just a string"', "42", "{broken"]) {
      const res = await login(raw);
      expect([res.status, res.body.error.type]).toEqual([400, "INVALID_JSON"]);
    }
    const latin1 = await login(body, { "content-type": "application/json; charset=latin1" });
    expect([latin1.status, latin1.body.error.type]).toEqual([415, "UNSUPPORTED_CHARSET"]);
  });

  it("answers an oversized body with 413", async () => {
    const res = await app.http.post("/api/v1/auth/register", { email: uniqueEmail(), password: "x".repeat(5000) });
    expect(res.status).toBe(413);
    expect(res.body.error.type).toBe("PAYLOAD_TOO_LARGE");
  });

  it("echoes a sane X-Request-ID and generates one otherwise", async () => {
    const echoed = await app.http.get("/api/health", { headers: { "x-request-id": "trace-abc.123" } });
    expect(echoed.headers.get("x-request-id")).toBe("trace-abc.123");
    expect(echoed.body.request_id).toBe("trace-abc.123");
    const unsafe = await app.http.get("/api/health", { headers: { "x-request-id": "evil id with spaces;<script>" } });
    expect(unsafe.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("health and readiness", () => {
  it("reports the service name and version, and readiness of its dependencies", async () => {
    const health = await app.http.get("/api/health");
    expect(health.status).toBe(200);
    expect(health.body.data).toMatchObject({ status: "healthy", service: "keyward" });
    expect(health.body.data.version).toMatch(/^\d+\.\d+\.\d+/);
    const ready = await app.http.get("/api/ready");
    expect(ready.status).toBe(200);
    expect(ready.body.data.checks.database).toBe("ok");
    expect(ready.body.data.checks.redis).toBe(app.container.redis ? "ok" : "in-process");
  });

  it("sets security headers on every response", async () => {
    const res = await app.http.get("/api/health");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("x-powered-by")).toBeNull();
    // Served over plain http here: no HSTS.
    expect(res.headers.get("strict-transport-security")).toBeNull();
  });

  it("answers the probes before anything else, and other /api paths still reach their 404 or 405", async () => {
    const res = await app.http.request("POST", "/api/health");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect((await app.http.request("HEAD", "/api/health")).status).toBe(200);
    const unknown = await app.http.get("/api/nothing");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.type).toBe("NOT_FOUND");
    expect((await app.http.get("/api/v1/auth/me")).body.error.type).toBe("AUTH_REQUIRED");
  });
});

describe("answers are never stored by caches", () => {
  it("GraphQL answers say no-store, errors included", async () => {
    const user = await newUser(app);
    const ok = await app.http.gql("{ me { id } }", undefined, { token: user.token });
    expect(ok.headers.get("cache-control")).toBe("no-store");
    const bad = await app.http.gql("{ nope }", undefined, { token: user.token });
    expect(bad.errors?.length).toBeGreaterThan(0);
    expect(bad.headers.get("cache-control")).toBe("no-store");
  });
});

describe("CORS", () => {
  it("allows listed and wildcard-pattern origins with credentials and the same header list everywhere", async () => {
    const preflight = await app.http.request("OPTIONS", "/api/v1/auth/login", {
      headers: { origin: "https://app.partner.test", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://app.partner.test");
    expect(preflight.headers.get("access-control-allow-credentials")).toBe("true");
    const actual = await app.http.get("/api/health", { headers: { origin: "https://console.eu.example.com" } });
    expect(actual.headers.get("access-control-allow-origin")).toBe("https://console.eu.example.com");
    expect(actual.headers.get("access-control-allow-headers")).toBe(preflight.headers.get("access-control-allow-headers"));
    const other = await app.http.get("/api/health", { headers: { origin: "https://evil.test" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const lookalike = await app.http.get("/api/health", { headers: { origin: "https://example.com.evil.test" } });
    expect(lookalike.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("echoes the request's origin instead of * when * is combined with credentials", async () => {
    const star = await startTestApp({ CORS_ORIGINS: "*", CORS_SUPPORTS_CREDENTIALS: "true" });
    try {
      const res = await star.http.get("/api/health", { headers: { origin: "https://anything.test" } });
      expect(res.headers.get("access-control-allow-origin")).toBe("https://anything.test");
      expect(res.headers.get("access-control-allow-credentials")).toBe("true");
      expect(res.headers.get("vary")).toContain("Origin");
      const preflight = await star.http.request("OPTIONS", "/graphql", {
        headers: { origin: "https://anything.test", "access-control-request-method": "POST" },
      });
      expect(preflight.headers.get("access-control-allow-origin")).toBe("https://anything.test");
      expect(preflight.headers.get("access-control-allow-headers")).toBe(res.headers.get("access-control-allow-headers"));
    } finally {
      await star.close();
    }
    const noCreds = await startTestApp({ CORS_ORIGINS: "*", CORS_SUPPORTS_CREDENTIALS: "false" });
    try {
      const res = await noCreds.http.get("/api/health", { headers: { origin: "https://anything.test" } });
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    } finally {
      await noCreds.close();
    }
  });
});

describe("token hand-off (GET /auth/token)", () => {
  it("returns the token, or redirects only to origins CORS_ORIGINS allows (wildcards included)", async () => {
    const user = await newUser(app);
    const plain = await app.http.get("/api/v1/auth/token", { token: user.token });
    expect(plain.body.data.token).toBe(user.token);
    const ok = await app.http.get(`/api/v1/auth/token?redirect=${encodeURIComponent("https://cli.dev.example.com/cb?x=1")}`, { token: user.token });
    expect(ok.status).toBe(302);
    const location = new URL(ok.headers.get("location")!);
    expect(location.origin).toBe("https://cli.dev.example.com");
    expect(location.searchParams.get("token")).toBe(user.token);
    expect(location.searchParams.get("x")).toBe("1");
    for (const bad of ["https://evil.test/", "javascript:alert(1)", "//example.com", "https://example.com.evil.test/"]) {
      const res = await app.http.get(`/api/v1/auth/token?redirect=${encodeURIComponent(bad)}`, { token: user.token });
      expect(res.status).toBe(400);
      expect(res.body.error.type).toBe("INVALID_REDIRECT");
    }
  });
});

describe("CSRF protection for cookie sessions", () => {
  it("refuses cross-site writes carried by the cookie and accepts same-origin ones", async () => {
    const { email, password } = await registerUser(app);
    const cookie = sessionCookie((await login(app, email, password)).headers);
    const crossSite = await app.http.patch("/api/v1/users/me", { full_name: "Hacked" }, { cookie, headers: { origin: "https://evil.test" } });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.error.type).toBe("CSRF_CHECK_FAILED");
    const noOrigin = await app.http.patch("/api/v1/users/me", { full_name: "Hacked" }, { cookie });
    expect(noOrigin.status).toBe(403);
    const sameOrigin = await app.http.patch("/api/v1/users/me", { full_name: "Mine" }, { cookie, headers: { origin: app.url } });
    expect(sameOrigin.status).toBe(200);
    const me = await app.http.get("/api/v1/users/me", { cookie });
    expect(me.body.data.user.full_name).toBe("Mine");
  });

  it("refuses a GraphQL mutation sent as a simple (CSRF-able) request", async () => {
    const user = await newUser(app);
    const res = await app.http.request("POST", "/graphql", {
      rawBody: "query=mutation{logout{message}}",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Bearer ${user.token}` },
    });
    expect(res.status).toBe(400);
    expect((await app.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(200);
  });
});
