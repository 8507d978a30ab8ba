import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { sessionCookie } from "../helpers/http.js";
import { login, newUser, registerUser } from "../factories/users.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ SESSION_IDLE_TIMEOUT: "1800", SESSION_ABSOLUTE_TIMEOUT: "7200" });
});
afterAll(() => app?.close());

const ME = "{ me { id email } }";

describe("one session for both doors", () => {
  it("authenticates the same session through the bearer header and the cookie", async () => {
    const { email, password } = await registerUser(app);
    const res = await login(app, email, password);
    expect(res.status).toBe(200);
    const { token, user } = res.body.data;
    expect(token).toMatch(/^kws_/);
    const cookie = sessionCookie(res.headers);
    expect(res.headers.getSetCookie()[0]).toMatch(/HttpOnly/i);
    expect(res.headers.getSetCookie()[0]).toMatch(/SameSite=Lax/i);

    expect((await app.http.get("/api/v1/auth/me", { token })).body.data.user.id).toBe(user.id);
    expect((await app.http.get("/api/v1/auth/me", { cookie })).body.data.user.id).toBe(user.id);
    expect((await app.http.gql(ME, {}, { token })).data.me.id).toBe(user.id);
    expect((await app.http.gql(ME, {}, { cookie })).data.me.id).toBe(user.id);

    // Both name the same session: one logout ends it for both.
    expect((await app.http.post("/api/v1/auth/logout", {}, { token })).status).toBe(200);
    expect((await app.http.get("/api/v1/auth/me", { cookie })).status).toBe(401);
  });

  it("accepts the lower-case scheme the original CLI sends and refuses malformed headers", async () => {
    const user = await newUser(app);
    expect((await app.http.get("/api/v1/auth/me", { headers: { authorization: `bearer ${user.token}` } })).status).toBe(200);
    const bad = await app.http.get("/api/v1/auth/me", { headers: { authorization: `Token ${user.token}` } });
    expect(bad.status).toBe(401);
    expect(bad.body.error.type).toBe("INVALID_AUTH_FORMAT");
    const none = await app.http.get("/api/v1/auth/me");
    expect(none.status).toBe(401);
    expect(none.body.error.type).toBe("AUTH_REQUIRED");
  });

  it("issues a new session at every sign-in (no fixation) and stores only token hashes", async () => {
    const user = await newUser(app);
    const second = (await login(app, user.email)).body.data.token;
    expect(second).not.toBe(user.token);
    // A token the server did not issue names nothing, even if a client offers it as a cookie.
    const forged = await app.http.get("/api/v1/auth/me", { token: "kws_forged-value" });
    expect(forged.status).toBe(401);
    if (app.container.redis) {
      const keys = await app.container.redis.keys(`${app.container.config.redis.keyPrefix}sess:*`);
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.join(" ")).not.toContain(second);
      expect(keys.every((k) => /sess:[0-9a-f]{64}$/.test(k))).toBe(true);
    }
  });
});

describe("sliding expiry", () => {
  it("ends a session left idle longer than the idle cap", async () => {
    const user = await newUser(app);
    app.clock.advance(1700);
    expect((await app.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(200);
    // Used at 1700 s: the idle window restarts from there.
    app.clock.advance(1700);
    expect((await app.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(200);
    app.clock.advance(1801);
    const expired = await app.http.get("/api/v1/auth/me", { token: user.token });
    expect(expired.status).toBe(401);
    expect(expired.body.error.type).toBe("INVALID_TOKEN");
  });

  it("ends an active session at the absolute cap", async () => {
    const user = await newUser(app);
    for (let t = 0; t < 7200 - 1500; t += 1500) {
      app.clock.advance(1500);
      expect((await app.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(200);
    }
    app.clock.advance(1500);
    expect((await app.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(401);
  });

  it("extends both caps with remember-me and sets a persistent cookie", async () => {
    const { email, password } = await registerUser(app);
    const res = await login(app, email, password, { remember_me: true });
    const expires = new Date(res.body.data.expires_at).getTime() - app.clock.now().getTime();
    expect(Math.abs(expires - 30 * 24 * 3600 * 1000)).toBeLessThan(5000);
    expect(res.headers.getSetCookie()[0]).toMatch(/Expires=/);
    app.clock.advance(3 * 3600);
    expect((await app.http.get("/api/v1/auth/me", { token: res.body.data.token })).status).toBe(200);
  });
});

describe("listing and revoking sessions", () => {
  it("lists the caller's sessions with the current one marked, and revokes another", async () => {
    const user = await newUser(app);
    const other = (await login(app, user.email, undefined)).body.data.token;
    const list = await app.http.get("/api/v1/auth/sessions", { token: user.token, headers: { "user-agent": "vitest-agent" } });
    expect(list.status).toBe(200);
    expect(list.body.data.count).toBe(2);
    const current = list.body.data.sessions.find((s: { current: boolean }) => s.current);
    const notCurrent = list.body.data.sessions.find((s: { current: boolean }) => !s.current);
    expect(current).toBeDefined();
    expect(notCurrent.id).not.toContain("kws_");

    const revoked = await app.http.delete(`/api/v1/auth/sessions/${notCurrent.id}`, { token: user.token });
    expect(revoked.status).toBe(200);
    expect((await app.http.get("/api/v1/auth/me", { token: other })).status).toBe(401);
    expect((await app.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(200);
  });

  it("reports another user's session id as not found and leaves it alone", async () => {
    const alice = await newUser(app);
    const bob = await newUser(app);
    const bobSession = (await app.http.get("/api/v1/auth/sessions", { token: bob.token })).body.data.sessions[0].id;
    const res = await app.http.delete(`/api/v1/auth/sessions/${bobSession}`, { token: alice.token });
    expect(res.status).toBe(404);
    expect(res.body.error.type).toBe("SESSION_NOT_FOUND");
    expect((await app.http.get("/api/v1/auth/me", { token: bob.token })).status).toBe(200);
  });

  it("revokes through GraphQL with the same result", async () => {
    const user = await newUser(app);
    const other = (await login(app, user.email)).body.data.token;
    const sessions = (await app.http.gql("{ mySessions { id current } }", {}, { token: user.token })).data.mySessions;
    const target = sessions.find((s: { current: boolean }) => !s.current).id;
    const res = await app.http.gql("mutation($id: ID!) { revokeSession(id: $id) { message } }", { id: target }, { token: user.token });
    expect(res.data.revokeSession.message).toBe("Session revoked");
    expect((await app.http.get("/api/v1/auth/me", { token: other })).status).toBe(401);
  });
});
