import { generateKeyPairSync, randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { importJWK, SignJWT, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startBackchannelOp, type BackchannelOp } from "../helpers/backchannel-op.js";
import { Browser } from "../helpers/oidc-idp.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";
import { SoftAuthenticator } from "../helpers/soft-authenticator.js";
import { orgWithRoles } from "../factories/orgs.js";
import { newUser } from "../factories/users.js";

/**
 * OpenID Connect Back-Channel Logout 1.0 at an organization's connection (issue 35), with a REAL
 * provider that sends it (oidc-provider with backchannelLogout on, see helpers/backchannel-op.ts):
 * signing out at the provider ends exactly the Keyward sessions of that provider session; logout
 * tokens that break one rule of the spec (issuer, audience, signature, events, nonce, replay, age)
 * are refused with a 400 and end nothing.
 */
const EVENT = "http://schemas.openid.net/event/backchannel-logout";
let app: TestApp;
let op: BackchannelOp;
const tag = Date.now().toString(36);
const DOMAIN = `bcl-${tag}.test`;
const at = (local: string) => `${local}@${DOMAIN}`;
let org: { id: string };
let admin: Awaited<ReturnType<typeof orgWithRoles>>["admin"];
let connection: { id: string; backchannel_logout_uri: string };
let callback: string;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_OAUTH: "1000/60" });
  callback = `${app.url}/sso/oidc/callback`;
  op = await startBackchannelOp([
    { email: at("alice"), password: "alice-pass", name: "Alice Back" },
    { email: at("bob"), password: "bob-pass", name: "Bob Back" },
    { email: at("carol"), password: "carol-pass", name: "Carol Linked" },
    { email: at("dan"), password: "dan-pass", name: "Dan Mailed" },
  ]);
  ({ org, admin } = await orgWithRoles(app));
  await app.container.db.execute(sql`insert into organization_domains (organization_id, domain, verification_token, status, verified_at) values (${org.id}, ${DOMAIN}, ${`tok-${DOMAIN}`}, 'verified', now())`);
  const created = await app.http.post(
    `/api/v1/organizations/${org.id}/sso/connections/oidc`,
    { name: "Back-channel IdP", issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret },
    { token: admin.token },
  );
  expect(created.status, created.text).toBe(201);
  connection = created.body.data.connection;
  await op.register({ redirectUri: callback, backchannelLogoutUri: connection.backchannel_logout_uri });
}, 30_000);
afterAll(async () => {
  await app?.close();
  await op?.close();
});

const personOf = (email: string) => op.users.find((u) => u.email === email)!;

async function signIn(email: string, browser = new Browser()) {
  const started = await browser.fetch(`${app.url}/sso/start/${connection.id}`);
  expect(started.status).toBe(303);
  const back = await browser.loginAtIdp(started.headers.get("location")!, { username: email, password: email.startsWith("alice") ? "alice-pass" : "bob-pass" }, callback);
  const done = await browser.fetch(back);
  const landing = new URL(done.headers.get("location")!);
  expect(landing.searchParams.get("error_type"), landing.toString()).toBeNull();
  const sid = done.headers.getSetCookie().find((c) => c.includes(".sid="))!.split(";")[0]!;
  return { sid, browser };
}

const alive = async (cookie: string) => (await app.http.get("/api/v1/users/me", { cookie })).status === 200;

/** A logout token as the provider would sign it, with `change` applied (undefined removes a claim). */
async function logoutToken(change: Record<string, unknown> = {}, key: Record<string, unknown> = op.privateJwk): Promise<string> {
  const claims: Record<string, unknown> = { iss: op.issuer, aud: op.clientId, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 120, jti: randomUUID(), events: { [EVENT]: {} }, sub: personOf(at("alice")).sub, ...change };
  for (const [k, v] of Object.entries(claims)) if (v === undefined) delete claims[k];
  return new SignJWT(claims as JWTPayload).setProtectedHeader({ alg: "RS256", kid: op.privateJwk.kid, typ: "logout+jwt" }).sign(await importJWK(key as never, "RS256"));
}

async function send(token: string, connectionId = connection.id) {
  const res = await fetch(`${app.url}/sso/oidc/${connectionId}/backchannel-logout`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ logout_token: token }).toString(),
  });
  const text = await res.text();
  return { status: res.status, cacheControl: res.headers.get("cache-control"), body: text ? (JSON.parse(text) as { error?: string; error_description?: string }) : null };
}

/** Signs out at the provider as its own page does (RP-initiated logout, "yes, sign me out"). */
async function signOutAtProvider(browser: Browser) {
  const page = await browser.fetch(`${op.issuer}/session/end`);
  const html = await page.text();
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
  expect(xsrf, html.slice(0, 300)).toBeTruthy();
  const confirmed = await browser.fetch(`${op.issuer}/session/end/confirm`, { method: "POST", body: new URLSearchParams({ xsrf: xsrf!, logout: "yes" }).toString() });
  expect(confirmed.status).toBeLessThan(400);
}

describe("OpenID Connect back-channel logout", () => {
  it("admins see the URI to register at their provider (REST and GraphQL)", async () => {
    expect(connection.backchannel_logout_uri).toBe(`${app.url}/sso/oidc/${connection.id}/backchannel-logout`);
    const gql = await app.http.gql("query($orgId: ID!) { ssoConnections(orgId: $orgId) { id backchannelLogoutUri } }", { orgId: org.id }, { token: admin.token });
    expect(gql.data.ssoConnections).toEqual([{ id: connection.id, backchannelLogoutUri: connection.backchannel_logout_uri }]);
  });

  it("signing out at the provider ends the Keyward session of that provider session only", async () => {
    const one = await signIn(at("alice"));
    const two = await signIn(at("alice"));
    const bob = await signIn(at("bob"));
    expect(await alive(one.sid)).toBe(true);
    const before = op.sent.length;
    await signOutAtProvider(one.browser);
    expect(op.sent.slice(before)).toEqual([{ uri: "ok", status: 200 }]);
    expect(await alive(one.sid)).toBe(false);
    // Alice's other provider session (another sid) and Bob are untouched.
    expect(await alive(two.sid)).toBe(true);
    expect(await alive(bob.sid)).toBe(true);
    const audit = resultRows<{ success: boolean; user_id: string; metadata: Record<string, unknown> }>(
      await app.container.db.execute(sql`select success, user_id, metadata from audit_logs where organization_id = ${org.id} and action = 'sso.logout' order by created_at, id`),
    );
    expect(audit.at(-1)).toMatchObject({ success: true, metadata: { channel: "backchannel", bySid: true, sessionsEnded: 1, connectionId: connection.id } });
  });

  it("a token naming only the subject ends all of that person's sessions from this connection", async () => {
    const one = await signIn(at("alice"));
    const two = await signIn(at("alice"));
    const bob = await signIn(at("bob"));
    const res = await send(await logoutToken());
    expect(res).toMatchObject({ status: 200, cacheControl: "no-store" });
    expect(await alive(one.sid)).toBe(false);
    expect(await alive(two.sid)).toBe(false);
    expect(await alive(bob.sid)).toBe(true);
  });

  /** An SSO sign-in of `local`'s existing, unlinked account: a pending link, held by `browser` (its binding cookie). */
  async function pendingLink(local: string, next?: string) {
    const browser = new Browser();
    const started = await browser.fetch(`${app.url}/sso/start/${connection.id}${next ? `?next=${encodeURIComponent(next)}` : ""}`);
    expect(started.status).toBe(303);
    const back = await browser.loginAtIdp(started.headers.get("location")!, { username: at(local), password: `${local}-pass` }, callback);
    const landing = new URL((await browser.fetch(back)).headers.get("location")!);
    expect(landing.pathname, landing.toString()).toBe("/login");
    return { id: landing.searchParams.get("sso_link")!, browser, cookie: browser.cookieHeader(app.url) };
  }
  const post = (path: string, body: unknown, cookie: string) => app.http.post(`/api/v1${path}`, body, { cookie, headers: { origin: app.url } });
  const sidOf = (headers: Headers) => headers.getSetCookie().find((c) => c.includes(".sid="))!.split(";")[0]!;

  it("signing out at the provider ends a session opened by confirming a pending link (passkey)", async () => {
    const carol = await newUser(app, { email: at("carol") });
    const authenticator = new SoftAuthenticator(app.url, "localhost");
    const reg = await app.http.post("/api/v1/auth/webauthn/register/begin", {}, { token: carol.token });
    expect((await app.http.post("/api/v1/auth/webauthn/register/complete", { challenge_id: reg.body.data.challenge_id, response: authenticator.register(reg.body.data.options), name: "Laptop" }, { token: carol.token })).status).toBe(201);
    const { id, browser, cookie } = await pendingLink("carol");
    const begin = await post("/auth/webauthn/login/begin", {}, cookie);
    const ok = await post("/auth/webauthn/login/complete", { challenge_id: begin.body.data.challenge_id, response: authenticator.assert(begin.body.data.options), sso_link: id }, cookie);
    expect(ok.status, ok.text).toBe(200);
    const sid = sidOf(ok.headers);
    expect(await alive(sid)).toBe(true);
    // Carol's own password session is not the connection's: it stays.
    expect((await app.http.get("/api/v1/users/me", { token: carol.token })).status).toBe(200);
    const before = op.sent.length;
    await signOutAtProvider(browser);
    expect(op.sent.slice(before)).toEqual([{ uri: "ok", status: 200 }]);
    expect(await alive(sid)).toBe(false);
    expect((await app.http.get("/api/v1/users/me", { token: carol.token })).status).toBe(200);
    const [audit] = resultRows<{ metadata: Record<string, unknown> }>(
      await app.container.db.execute(sql`select metadata from audit_logs where action = 'sso.logout' and user_id = ${carol.id} order by created_at desc, id desc limit 1`),
    );
    expect(audit!.metadata).toMatchObject({ channel: "backchannel", bySid: true, sessionsEnded: 1 });
  });

  it("a mailed confirmation lands on the sign-in's next, and a logout token for that person ends its session", async () => {
    const dan = await newUser(app, { email: at("dan") });
    await app.container.db.execute(sql`delete from password_credentials where user_id = ${dan.id}`);
    const { id, cookie } = await pendingLink("dan", "/account/security?tab=sso");
    const sent = await post("/auth/sso/link/email", { sso_link: id }, cookie);
    expect(sent.status, sent.text).toBe(200);
    await app.flushEmails();
    const token = tokenFrom(linkIn(app.mail.lastWith(at("dan"), "/sso/link/confirm?token=")!, "/sso/link/confirm"));
    const page = await app.http.get(`/sso/link/confirm?token=${token}`);
    expect(page.text).toMatch(/<a id="sso-link-continue"[^>]*data-continue/);
    const ok = await post("/auth/sso/link/email/confirm", { token }, cookie);
    expect(ok.status, ok.text).toBe(200);
    // The page's Continue goes where the answer says: the path the SSO sign-in asked for.
    expect(ok.body.data.redirect_to).toBe("/account/security?tab=sso");
    const sid = sidOf(ok.headers);
    expect(await alive(sid)).toBe(true);
    expect((await send(await logoutToken({ sub: personOf(at("dan")).sub }))).status).toBe(200);
    expect(await alive(sid)).toBe(false);
  });

  describe("refuses, with a 400 JSON error, and ends nothing", () => {
    const { privateKey: otherKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const cases: [string, () => Promise<string>][] = [
      ["another issuer", () => logoutToken({ iss: "http://127.0.0.1:1/other" })],
      ["another audience", () => logoutToken({ aud: "someone-else" })],
      ["a nonce (an ID token is not a logout token)", () => logoutToken({ nonce: "n-0S6_WzA2Mj" })],
      ["no events claim", () => logoutToken({ events: undefined })],
      ["events without the back-channel logout event", () => logoutToken({ events: { "http://schemas.openid.net/event/other": {} } })],
      ["neither sub nor sid", () => logoutToken({ sub: undefined })],
      ["no jti", () => logoutToken({ jti: undefined })],
      ["an iat from long ago", () => logoutToken({ iat: Math.floor(Date.now() / 1000) - 3600, exp: undefined })],
      ["an iat in the future", () => logoutToken({ iat: Math.floor(Date.now() / 1000) + 3600, exp: undefined })],
      ["a signature by another key", () => logoutToken({}, { ...otherKey.export({ format: "jwk" }), kid: op.privateJwk.kid })],
      ["a tampered payload", async () => {
        const [h, , s] = (await logoutToken()).split(".");
        return `${h}.${Buffer.from(JSON.stringify({ iss: op.issuer, aud: op.clientId, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), events: { [EVENT]: {} }, sub: personOf(at("bob")).sub })).toString("base64url")}.${s}`;
      }],
      ["an unsigned token (alg none)", async () => `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${Buffer.from(JSON.stringify({ iss: op.issuer, aud: op.clientId, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), events: { [EVENT]: {} }, sub: personOf(at("alice")).sub })).toString("base64url")}.`],
      ["garbage", async () => "not-a-jwt"],
    ];
    for (const [name, make] of cases) {
      it(name, async () => {
        const alice = await signIn(at("alice"));
        const res = await send(await make());
        expect(res.status).toBe(400);
        expect(res.cacheControl).toBe("no-store");
        expect(res.body?.error).toBe("invalid_request");
        expect(typeof res.body?.error_description).toBe("string");
        expect(await alive(alice.sid)).toBe(true);
      });
    }

    it("a replayed jti (also 20 copies at once: one is acted on)", async () => {
      await signIn(at("alice"));
      const token = await logoutToken();
      const results = await Promise.all(Array.from({ length: 20 }, () => send(token)));
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      expect(results.filter((r) => r.status === 400)).toHaveLength(19);
      // The session the replay would end, signed in after the first use: untouched.
      const alice = await signIn(at("alice"));
      expect((await send(token)).status).toBe(400);
      expect(await alive(alice.sid)).toBe(true);
      const refused = resultRows<{ n: number }>(await app.container.db.execute(sql`select count(*)::int as n from audit_logs where organization_id = ${org.id} and action = 'sso.logout' and success = false and error_message like '%already used%'`));
      expect(refused[0]!.n).toBeGreaterThanOrEqual(20);
    });

    it("a token for an unknown connection, or at a SAML connection's id", async () => {
      const alice = await signIn(at("alice"));
      expect((await send(await logoutToken(), "00000000-0000-4000-8000-000000000000")).status).toBe(400);
      expect((await send(await logoutToken(), "not-a-uuid")).status).toBe(400);
      const noToken = await fetch(`${app.url}/sso/oidc/${connection.id}/backchannel-logout`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "" });
      expect(noToken.status).toBe(400);
      expect(await alive(alice.sid)).toBe(true);
    });
  });
});
