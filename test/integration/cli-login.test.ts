import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { auditRows } from "../helpers/db.js";
import { sessionCookie } from "../helpers/http.js";
import { login, newUser } from "../factories/users.js";

/** The command-line client's browser sign-in bridge (the original API's /token_please). */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

const CLI = "http://127.0.0.1:8250/?token=";

async function startCliLogin(redirect = CLI): Promise<string> {
  const res = await app.http.get(`/api/v1/token_please?redirect_url=${encodeURIComponent(redirect)}`);
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("location")!);
  expect(location.pathname).toBe("/cli/authorize");
  return location.searchParams.get("cli_token")!;
}

describe("command-line sign-in", () => {
  it("only sends tokens to a loopback address", async () => {
    expect((await app.http.get("/api/v1/token_please")).body.error.type).toBe("MISSING_REDIRECT_URL");
    for (const bad of [
      "https://evil.example/?token=",
      "http://evil.example:8250/?token=",
      "http://127.0.0.1.evil.example/",
      "http://user:pw@127.0.0.1:8250/",
      "http://127.0.0.1/?token=",
      "http://127.0.0.1:8080/redirect?url=https://evil.example/?t=",
      "http://127.0.0.1:8250/?token=abc",
      "http://127.0.0.1:8250/#token=",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "not a url",
    ]) {
      const res = await app.http.get(`/api/v1/token_please?redirect_url=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.error.type, bad).toBe("INVALID_REDIRECT_URL");
    }
  });

  it("gives the CLI a session of its own once the signed-in user confirms, once", async () => {
    const user = await newUser(app);
    const cliToken = await startCliLogin();
    expect((await app.http.get(`/api/v1/cli/redirect-url?token=${cliToken}`)).status).toBe(401);
    const lookup = await app.http.get(`/api/v1/cli/redirect-url?token=${cliToken}`, { token: user.token });
    expect(lookup.body.data.redirect_url).toBe("http://127.0.0.1:8250/");

    // Only the signed-in browser confirms (cookie, same origin): not a bearer token, not another site.
    const bearer = await app.http.post("/api/v1/cli/authorize", { cli_token: cliToken }, { token: user.token });
    expect(bearer.body.error.type).toBe("BROWSER_SESSION_REQUIRED");
    const cookie = sessionCookie((await login(app, user.email)).headers);
    const crossSite = await app.http.post("/api/v1/cli/authorize", { cli_token: cliToken }, { cookie, headers: { origin: "https://evil.example" } });
    expect(crossSite.status).toBe(403);
    const done = await app.http.post("/api/v1/cli/authorize", { cli_token: cliToken }, { cookie, headers: { origin: app.url } });
    expect(done.status).toBe(200);
    const handed = new URL(done.body.data.redirect_url);
    expect(handed.origin).toBe("http://127.0.0.1:8250");
    const cliSession = handed.searchParams.get("token")!;
    expect(cliSession).not.toBe(user.token);
    // What the CLI does with it (lower-case scheme, as that client sends it).
    const check = await app.http.get("/api/v1/auth/me", { headers: { authorization: `bearer ${cliSession}` } });
    expect(check.body.data.user.id).toBe(user.id);

    // Its own session: signing the browser out leaves the CLI signed in.
    await app.http.post("/api/v1/auth/logout", {}, { token: user.token });
    expect((await app.http.get("/api/v1/auth/me", { token: cliSession })).status).toBe(200);
    expect((await auditRows(app, user.id)).some((r) => r.action === "user.cli_login")).toBe(true);

    const again = await app.http.post("/api/v1/cli/authorize", { cli_token: cliToken }, { cookie, headers: { origin: app.url } });
    expect(again.status).toBe(404);
    expect(again.body.error.type).toBe("TOKEN_NOT_FOUND");
  });

  it("expires a sign-in nobody confirmed", async () => {
    const user = await newUser(app);
    const cliToken = await startCliLogin("http://[::1]:9999/callback");
    const cookie = sessionCookie((await login(app, user.email)).headers);
    app.clock.advance(app.container.config.externalAuth.cliLoginTtl + 1);
    const late = await app.http.post("/api/v1/cli/authorize", { cli_token: cliToken }, { cookie, headers: { origin: app.url } });
    expect(late.body.error.type).toBe("TOKEN_NOT_FOUND");
    expect((await app.http.post("/api/v1/cli/authorize", { cli_token: "made-up" }, { cookie, headers: { origin: app.url } })).status).toBe(404);
  });
});
