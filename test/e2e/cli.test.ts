import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { buildCli, cliUser, loginWithLoopback, runCli, startCli, type CliUser } from "../helpers/cli.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { newSuperadmin, newUser } from "../factories/users.js";

/**
 * The built `keyward` client as a subprocess against a running Keyward: sign-in with the device
 * flow (approved in headless Chromium) and on the loopback redirect, automatic refresh, and
 * logout revoking the tokens at the server.
 */
let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  buildCli();
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

const saved = (u: CliUser) => JSON.parse(readFileSync(join(u.configDir, "credentials.json"), "utf8")).servers[app.url];

describe("keyward login", () => {
  it("signs in with the device flow, approved by the user in a browser elsewhere", async () => {
    const person = await newUser(app, { fullName: "Device Person" });
    const u = cliUser(app.url);
    const cli = startCli(["login", "--device"], u);
    const [, verificationUri, code] = await cli.waitFor(/open (\S+) and enter the code (\S+)/);
    expect(verificationUri).toBe(`${app.url}/api/v1/oidc/device`);
    // Piped stderr is no terminal: the spinner prints its line once instead of animating.
    await cli.waitFor(/Waiting for approval/);

    const page = await (await browser.newContext()).newPage();
    await page.goto(verificationUri!);
    await page.fill("input[name=user_code]", code!);
    await page.click("button[form='op.deviceInputForm']");
    await page.waitForSelector("#confirm");
    expect(await page.textContent("#user-code")).toBe(code);
    await page.click("#confirm");
    await page.waitForURL(/\/login\?next=/);
    await page.fill("#email", person.email);
    await page.click("#login-form button[type=submit]");
    await page.fill("#password", person.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForSelector("#allow");
    await page.click("#allow");
    await page.waitForSelector("text=Device connected");
    await page.context().close();

    const done = await cli.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain(`Signed in to ${app.url} as ${person.email}`);
    // The credentials are the user's alone.
    expect(statSync(join(u.configDir, "credentials.json")).mode & 0o777).toBe(0o600);
    expect(statSync(u.configDir).mode & 0o777).toBe(0o700);
    expect(saved(u).scope.split(" ")).toEqual(expect.arrayContaining(["ssh:sign", "orgs:read", "profile:read"]));

    const who = await runCli(["whoami", "--json"], u);
    expect(who.code, who.stderr).toBe(0);
    expect(JSON.parse(who.stdout).user.email).toBe(person.email);
  }, 90_000);

  it("exits 3 with one line when the user cancels the device sign-in", async () => {
    const person = await newUser(app, { fullName: "Canceller" });
    const u = cliUser(app.url);
    const cli = startCli(["login", "--device"], u);
    const [, verificationUri, code] = await cli.waitFor(/open (\S+) and enter the code (\S+)/);
    const agent = new OidcAgent(app.url);
    await agent.signIn(person.email, person.password);
    const page = await agent.follow(verificationUri!, "never");
    const entered = await agent.submitForm(verificationUri!, page.body, "op.deviceInputForm", { user_code: code! });
    await agent.submitForm(verificationUri!, await entered.text(), "op.deviceConfirmForm", { abort: "yes" });
    const done = await cli.done;
    expect(done.code).toBe(3);
    expect(done.stderr.trim().split("\n").at(-1)).toBe("error: Sign-in was denied");
  }, 60_000);

  it("signs in on the loopback redirect, and only the answer carrying its state counts", async () => {
    const person = await newUser(app, { fullName: "Loopback Person" });
    const u = cliUser(app.url);
    const cli = startCli(["login", "--json"], u);
    const [url] = await cli.waitFor(/https?:\/\/\S+\/authorize\?\S+/);
    const auth = new URL(url!);
    expect(auth.origin).toBe(app.url);
    expect(auth.searchParams.get("client_id")).toBe("keyward-cli");
    expect(auth.searchParams.get("code_challenge_method")).toBe("S256");
    expect(auth.searchParams.get("resource")).toBe(`${app.url}/api/v1`);
    expect(auth.searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    // A forged answer (wrong state) is refused and the CLI keeps waiting.
    const forged = await fetch(`${auth.searchParams.get("redirect_uri")}?code=stolen&state=wrong`);
    expect(forged.status).toBe(400);
    cli.child.kill("SIGTERM");
    await cli.done;

    const done = await loginWithLoopback(app.url, person, u, ["--json"]);
    expect(done.code, done.stderr).toBe(0);
    expect(done.consentShown).toBe(true);
    const out = JSON.parse(done.stdout);
    expect(out).toMatchObject({ server: app.url, user: { email: person.email } });
    expect((await app.http.get("/api/v1/auth/me", { token: saved(u).accessToken })).body.data.user.email).toBe(person.email);
  }, 60_000);

  it("refreshes an expired access token by itself (and the refresh token rotates)", async () => {
    const person = await newUser(app, { fullName: "Refresh Person" });
    const u = cliUser(app.url);
    expect((await loginWithLoopback(app.url, person, u)).code).toBe(0);
    const before = saved(u);
    const file = join(u.configDir, "credentials.json");
    const all = JSON.parse(readFileSync(file, "utf8"));
    all.servers[app.url].expiresAt = Date.now() - 1000;
    const { writeFileSync } = await import("node:fs");
    writeFileSync(file, JSON.stringify(all));

    const who = await runCli(["whoami"], u);
    expect(who.code, who.stderr).toBe(0);
    expect(who.stdout).toContain(person.email);
    const after = saved(u);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.expiresAt).toBeGreaterThan(Date.now());
  }, 60_000);
});

describe("keyward login again", () => {
  it("replaces the old sign-in: the new tokens work and the old refresh token is dead", async () => {
    const person = await newUser(app, { fullName: "Twice Person" });
    const u = cliUser(app.url);
    // The same browser both times: the provider may hand the second login the same grant.
    const browserSession = new OidcAgent(app.url);
    await browserSession.signIn(person.email, person.password);
    expect((await loginWithLoopback(app.url, person, u, [], browserSession)).code).toBe(0);
    const first = saved(u);
    const again = await loginWithLoopback(app.url, person, u, [], browserSession);
    expect(again.code, again.stderr).toBe(0);
    const second = saved(u);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    const who = await runCli(["whoami"], u);
    expect(who.code, who.stderr).toBe(0);
    expect((await app.http.get("/api/v1/auth/me", { token: second.accessToken })).status).toBe(200);
    const old = await fetch(`${app.url}/api/v1/oidc/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: first.refreshToken, client_id: "keyward-cli" }).toString(),
    });
    expect((await old.json()).error).toBe("invalid_grant");
  }, 60_000);
});

describe("keyward logout", () => {
  it("revokes the tokens at the server and forgets them", async () => {
    const person = await newUser(app, { fullName: "Logout Person" });
    const u = cliUser(app.url);
    expect((await loginWithLoopback(app.url, person, u)).code).toBe(0);
    const { accessToken, refreshToken } = saved(u);
    expect((await app.http.get("/api/v1/auth/me", { token: accessToken })).status).toBe(200);

    const out = await runCli(["logout"], u);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain("tokens revoked");
    expect(saved(u)).toBeUndefined();
    const me = await app.http.get("/api/v1/auth/me", { token: accessToken });
    expect(me.status).toBe(401);
    // The refresh token is dead too: the grant is gone.
    const refresh = await fetch(`${app.url}/api/v1/oidc/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: "keyward-cli" }).toString(),
    });
    expect(refresh.status).toBe(400);
    expect((await refresh.json()).error).toBe("invalid_grant");

    const who = await runCli(["whoami"], u);
    expect(who.code).toBe(3);
    expect(who.stderr.trim()).toBe(`error: Not signed in to ${app.url}: run \`keyward login\``);
  }, 60_000);

  it("exits 5 with one line when the server cannot be reached", async () => {
    const u = cliUser("http://127.0.0.1:9");
    const out = await runCli(["login", "--server", "http://127.0.0.1:59998"], u);
    expect(out.code).toBe(5);
    expect(out.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("a token without the scope", () => {
  it("exits 3 naming the refusal when the client is no longer allowed a scope the command needs", async () => {
    const person = await newUser(app, { fullName: "Scoped Person" });
    const u = cliUser(app.url);
    expect((await loginWithLoopback(app.url, person, u)).code).toBe(0);
    const operator = await newSuperadmin(app);
    const all = ["profile:read", "orgs:read", "ssh:keys", "ssh:sign", "networks:activate"];
    const allow = (scopes: string[]) => app.http.patch("/api/v1/admin/oidc-clients/keyward-cli", { allowed_api_scopes: scopes }, { token: operator.token });
    expect((await allow(all.filter((s) => s !== "orgs:read"))).status).toBe(200);
    try {
      const out = await runCli(["orgs", "--json"], u);
      expect(out.code).toBe(3);
      expect(out.stderr.trim().split("\n")).toHaveLength(1);
      expect(out.stderr).toContain("keyward login");
      expect(JSON.parse(out.stdout).error).toMatchObject({ type: "INSUFFICIENT_SCOPE", exit_code: 3 });
      // What the token still covers keeps working.
      expect((await runCli(["whoami"], u)).code).toBe(0);
    } finally {
      await allow(all);
    }
  }, 60_000);
});
