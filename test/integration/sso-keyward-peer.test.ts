import { createHash, randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startDns, type RealDns } from "../helpers/dns.js";
import { captureLogger } from "../helpers/log-capture.js";
import { Browser } from "../helpers/oidc-idp.js";
import { newUser, type TestUser } from "../factories/users.js";
import { newOrg } from "../factories/orgs.js";

/**
 * Enterprise sign-in (issue 35) with ANOTHER KEYWARD as the enterprise's OpenID provider: two
 * instances in one file. On the provider instance ("idp") the enterprise's admin registers an
 * OpenID Connect client (client_secret_basic, redirect URI = the first instance's callback) and
 * its people have accounts; on the first instance ("app") the organization proves its domain with a
 * REAL DNS record (dnsmasq) and adds a connection whose issuer is the provider instance. A browser
 * stand-in (cookies per origin, redirects by hand) walks: /sso/start?email= → the provider's
 * authorization endpoint → its hosted sign-in page (email first, then the password, as its script
 * does) → its consent page → back to the callback → a session on the first instance with a
 * just-in-time managed account, member of the organization with the connection's default role.
 * Then: the same person again is a returning identity (no consent, same account); a code replayed
 * under a fresh state is refused by the provider; a code the provider issued to another client is
 * refused. Keyward as a provider emits no groups claim (only `organizations`, objects for the
 * client's own organization), so group mapping has nothing to read: the default role applies.
 */
let app: TestApp;
let idp: TestApp;
let dns: RealDns;
let callback: string;
/** The first instance's log: what the provider answered when it refused a code. */
const log = captureLogger("warn");
const tag = Date.now().toString(36);
const DOMAIN = `northwind-${tag}.test`;
const at = (local: string) => `${local}@${DOMAIN}`;
const CLIENT_NAME = "Northwind sign-in for the app";

beforeAll(async () => {
  dns = await startDns();
  // Many flows from one loopback address: the per-address limits are raised on both instances.
  [app, idp] = await Promise.all([
    startTestApp({ DNS_RESOLVER: dns.server, DNS_TIMEOUT_MS: "2000", RATE_LIMIT_OAUTH: "1000/60" }, { logger: log.logger }),
    startTestApp({ RATE_LIMIT_OIDC_AUTHORIZE: "1000/60" }),
  ]);
  callback = `${app.url}/sso/oidc/callback`;
}, 60_000);
afterAll(async () => {
  await app?.close();
  await idp?.close();
  dns?.stop();
});

const base = (orgId: string) => `/api/v1/organizations/${orgId}/sso/connections`;

async function membership(orgId: string, userId: string) {
  const [row] = resultRows<{ role: string }>(await app.container.db.execute(sql`select role from org_memberships where organization_id = ${orgId} and user_id = ${userId} and deleted_at is null`));
  return row?.role ?? null;
}

async function identitiesOf(userId: string) {
  return resultRows<{ subject: string; connection_id: string }>(await app.container.db.execute(sql`select subject, connection_id from sso_identities where user_id = ${userId}`));
}

async function ssoAudit(orgId: string) {
  return resultRows<{ action: string; metadata: Record<string, unknown> }>(
    await app.container.db.execute(sql`select action, metadata from audit_logs where organization_id = ${orgId} and action like 'sso.%' order by created_at, id`),
  );
}

/** What the provider answered at its token endpoint each time the first instance's exchange failed. */
const providerRefusals = () => log.lines.filter((l) => l.msg === "identity provider call failed").map((l) => l.err?.error);
const errorOf = (res: Response) => new URL(res.headers.get("location")!).searchParams.get("error_type");
const sidOf = (res: Response) => res.headers.getSetCookie().find((c) => c.includes(".sid="))?.split(";")[0];

interface AtProvider {
  /** The callback URL the provider sent the browser to (code, state, iss), not yet followed. */
  back: string;
  loginPageShown: boolean;
  consentShown: boolean;
}

/**
 * At the provider instance, from its authorization URL to the redirect to `stopAt`: its hosted
 * sign-in page when the browser has no session there (the address first, which its script checks
 * at /sso/start?email= and learns is not single sign-on there, then the password), and its consent
 * page (Allow). The provider's forms post with its own Origin, as its pages do.
 */
async function throughProvider(browser: Browser, authorizationUrl: string, person: { email: string; password: string }, clientName: string, stopAt = callback): Promise<AtProvider> {
  let url = authorizationUrl;
  let loginPageShown = false;
  let consentShown = false;
  for (let hops = 0; hops < 20; hops++) {
    if (url.startsWith(stopAt)) return { back: url, loginPageShown, consentShown };
    expect(url.startsWith(idp.url), `left the provider for ${url}`).toBe(true);
    const res = await browser.fetch(url);
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url).toString();
      continue;
    }
    const html = await res.text();
    const here = new URL(url);
    if (res.status === 200 && here.pathname === "/login") {
      if (loginPageShown) throw new Error("the provider showed its sign-in page twice");
      loginPageShown = true;
      expect(html).toContain('id="login-form"');
      // Email first: the provider instance has no single sign-on for this address (its own 404).
      const discovered = await browser.fetch(`${idp.url}/sso/start?email=${encodeURIComponent(person.email)}`, { headers: { accept: "application/json" } });
      expect(discovered.status).toBe(404);
      const signedIn = await browser.fetch(`${idp.url}/api/v1/auth/login`, {
        method: "POST",
        body: JSON.stringify({ email: person.email, password: person.password, remember_me: false }),
        headers: { "content-type": "application/json", origin: idp.url },
      });
      expect(signedIn.status, await signedIn.clone().text()).toBe(200);
      // The page then goes where it was asked to come back to: the authorization's interaction.
      const next = here.searchParams.get("next")!;
      expect(next).toMatch(/^\/api\/v1\/oidc\/interaction\//);
      url = new URL(next, idp.url).toString();
      continue;
    }
    const confirm = /<form method="post" action="([^"]+\/confirm)">/.exec(html)?.[1];
    if (res.status === 200 && confirm) {
      consentShown = true;
      expect(html).toContain(`<span id="client-name">${clientName}</span> wants to access your account`);
      const posted = await browser.fetch(new URL(confirm, url).toString(), { method: "POST", headers: { origin: idp.url } });
      expect(posted.status).toBeGreaterThanOrEqual(300);
      expect(posted.status).toBeLessThan(400);
      url = new URL(posted.headers.get("location")!, url).toString();
      continue;
    }
    throw new Error(`unexpected page at the provider (${res.status} ${url}): ${html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").slice(0, 400)}`);
  }
  throw new Error("too many redirects at the provider");
}

/** The whole journey from the first instance's /sso/start to its callback's answer. */
async function signIn(person: { email: string; password: string }, browser = new Browser()) {
  const started = await browser.fetch(`${app.url}/sso/start?email=${encodeURIComponent(person.email)}`);
  expect(started.status, await started.clone().text()).toBe(303);
  const authorize = new URL(started.headers.get("location")!);
  expect(`${authorize.origin}${authorize.pathname}`).toBe(`${idp.url}/api/v1/oidc/authorize`);
  const provider = await throughProvider(browser, authorize.toString(), person, CLIENT_NAME);
  const done = await browser.fetch(provider.back);
  expect(done.status).toBe(303);
  return { ...provider, done, sid: sidOf(done), landing: new URL(done.headers.get("location")!), browser, authorize };
}

let org: { id: string };
let admin: TestUser;
let idpOrg: { id: string };
let idpAdmin: TestUser;
let client: { clientId: string; clientSecret: string };
let connectionId: string;
let alice: TestUser;
let aliceAppId: string;

describe("another Keyward as the organization's OpenID provider", () => {
  it("registers a client at the provider instance and a connection to it on the first, the domain proven by DNS", async () => {
    // The enterprise's own Keyward: its admin registers the first instance as a confidential client.
    idpAdmin = await newUser(idp, { fullName: "Northwind IT" });
    idpOrg = await newOrg(idp, idpAdmin, "Northwind IT");
    const registered = await idp.http.post(
      `/api/v1/organizations/${idpOrg.id}/clients`,
      { name: CLIENT_NAME, redirect_uris: [callback], grant_types: ["authorization_code"], token_endpoint_auth_method: "client_secret_basic" },
      { token: idpAdmin.token },
    );
    expect(registered.status, registered.text).toBe(201);
    client = { clientId: registered.body.data.client.client_id, clientSecret: registered.body.data.client.client_secret };
    expect(client.clientSecret).toBeTruthy();
    // Its people: accounts at the provider, in the enterprise's domain.
    alice = await newUser(idp, { email: at("alice"), fullName: "Alice Northwind" });

    // The first instance: the organization proves the domain and connects the provider.
    admin = await newUser(app, { fullName: "Northwind Admin" });
    org = await newOrg(app, admin, "Northwind");
    const claimed = await app.http.post(`/api/v1/organizations/${org.id}/domains`, { domain: DOMAIN }, { token: admin.token });
    expect(claimed.status, claimed.text).toBe(201);
    const claim = claimed.body.data.domain as { id: string; record_name: string; record_value: string };
    await dns.setTxt({ [claim.record_name]: [claim.record_value] });
    const verified = await app.http.post(`/api/v1/organizations/${org.id}/domains/${claim.id}/verify`, {}, { token: admin.token });
    expect(verified.body.data.domain.status).toBe("verified");

    const created = await app.http.post(
      `${base(org.id)}/oidc`,
      { name: "Northwind Keyward", issuer: idp.url, client_id: client.clientId, client_secret: client.clientSecret, auth_method: "client_secret_basic", default_role: "guest" },
      { token: admin.token },
    );
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.connection).toMatchObject({ kind: "oidc", issuer: idp.url, client_id: client.clientId, has_secret: true, redirect_uri: callback, default_role: "guest" });
    expect(created.text).not.toContain(client.clientSecret);
    connectionId = created.body.data.connection.id;
  });

  it("signs a new person in through the provider's own sign-in and consent pages: a managed account with the default role", async () => {
    const first = await signIn({ email: alice.email, password: alice.password });
    // The request the first instance sent: code flow with PKCE S256, its state, nonce and the address as a hint.
    expect(Object.fromEntries(first.authorize.searchParams)).toMatchObject({
      client_id: client.clientId,
      redirect_uri: callback,
      response_type: "code",
      code_challenge_method: "S256",
      scope: "openid email profile",
      login_hint: alice.email,
    });
    expect(first.loginPageShown).toBe(true);
    expect(first.consentShown).toBe(true);
    // The provider names itself in the answer (RFC 9207), and the first instance signs the person in.
    expect(new URL(first.back).searchParams.get("iss")).toBe(idp.url);
    expect(first.landing.searchParams.get("error_type")).toBeNull();
    expect(first.landing.toString()).toBe(`${app.url}/`);
    expect(first.sid).toBeTruthy();
    const me = await app.http.get("/api/v1/users/me", { cookie: first.sid! });
    expect(me.status).toBe(200);
    const user = me.body.data.user;
    expect(user).toMatchObject({ email: alice.email, full_name: "Alice Northwind", email_verified: true });
    expect(user.managed_by).toMatchObject({ id: org.id });
    aliceAppId = user.id;
    // An account of its own on the first instance (not the provider's), keyed by the provider's subject.
    expect(aliceAppId).not.toBe(alice.id);
    expect(await identitiesOf(aliceAppId)).toEqual([{ subject: alice.id, connection_id: connectionId }]);
    expect(await membership(org.id, aliceAppId)).toBe("guest");
    const orgs = await app.http.get("/api/v1/users/me/organizations", { cookie: first.sid! });
    expect(orgs.status).toBe(200);
    expect(orgs.text).toContain(org.id);
    // Her sign-in at the provider was the provider's: it records a consent for the client.
    const consents = await idp.http.get("/api/v1/users/me/consents", { token: alice.token });
    expect(consents.body.data.consents).toEqual([expect.objectContaining({ client_id: client.clientId })]);
  });

  it("knows the same person the second time: no consent asked, the same account, no new one", async () => {
    // A new browser: signs in at the provider again, the consent given before still counts.
    const again = await signIn({ email: alice.email, password: alice.password });
    expect(again.loginPageShown).toBe(true);
    expect(again.consentShown).toBe(false);
    expect(again.sid).toBeTruthy();
    expect((await app.http.get("/api/v1/users/me", { cookie: again.sid! })).body.data.user.id).toBe(aliceAppId);
    // The same browser: its provider session is reused, no page at all.
    const third = await signIn({ email: alice.email, password: alice.password }, again.browser);
    expect([third.loginPageShown, third.consentShown]).toEqual([false, false]);
    expect((await app.http.get("/api/v1/users/me", { cookie: third.sid! })).body.data.user.id).toBe(aliceAppId);
    const accounts = resultRows<{ n: number | string }>(await app.container.db.execute(sql`select count(*) as n from users where email = ${alice.email}`));
    expect(Number(accounts[0]!.n)).toBe(1);
    const logins = (await ssoAudit(org.id)).filter((r) => r.action === "sso.login").map((r) => [r.metadata.subject, r.metadata.newAccount]);
    expect(logins).toEqual([
      [alice.id, true],
      [alice.id, false],
      [alice.id, false],
    ]);
  });

  it("refuses a replayed callback and a used code under a fresh state", async () => {
    const ok = await signIn({ email: alice.email, password: alice.password });
    expect(ok.sid).toBeTruthy();
    // The same callback again: its state was used.
    const replayed = await ok.browser.fetch(ok.back);
    expect(errorOf(replayed)).toBe("OAUTH_STATE_INVALID");
    expect(sidOf(replayed)).toBeUndefined();
    // The used code with a state this browser holds now: the provider refuses to redeem it twice.
    const fresh = await ok.browser.fetch(`${app.url}/sso/start/${connectionId}`);
    const state = new URL(fresh.headers.get("location")!).searchParams.get("state")!;
    const reused = new URL(ok.back);
    reused.searchParams.set("state", state);
    const refused = await ok.browser.fetch(reused.toString());
    expect(errorOf(refused)).toBe("OAUTH_ERROR");
    expect(sidOf(refused)).toBeUndefined();
    // The unknown state names no organization; the refused code is in the organization's activity.
    const failures = (await ssoAudit(org.id)).filter((r) => r.action === "sso.login_failed").map((r) => [r.metadata.code, r.metadata.connectionId]);
    expect(failures).toEqual([["OAUTH_ERROR", connectionId]]);
    // Refused by the provider at its token endpoint, not by a check of the first instance's own.
    expect(providerRefusals()).toEqual(["invalid_grant"]);
  });

  it("refuses a code the provider issued to another client, even with this browser's state", async () => {
    // Another organization at the provider registers a client with the same redirect URI.
    const other = await newUser(idp, { fullName: "Someone Else" });
    const otherOrg = await newOrg(idp, other, "Someone Else's apps");
    const reg = await idp.http.post(`/api/v1/organizations/${otherOrg.id}/clients`, { name: "Another client", redirect_uris: [callback], grant_types: ["authorization_code"] }, { token: other.token });
    expect(reg.status, reg.text).toBe(201);
    const otherClientId = reg.body.data.client.client_id as string;
    const otherSecret = reg.body.data.client.client_secret as string;
    const browser = new Browser();
    // That client's authorization, completed by Alice at the provider (its consent included).
    const verifier = randomBytes(32).toString("base64url");
    const foreign = new URL(`${idp.url}/api/v1/oidc/authorize`);
    for (const [k, v] of Object.entries({
      client_id: otherClientId,
      response_type: "code",
      redirect_uri: callback,
      scope: "openid email profile",
      state: "theirs",
      nonce: "theirs",
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    }))
      foreign.searchParams.set(k, v);
    const theirs = await throughProvider(browser, foreign.toString(), { email: alice.email, password: alice.password }, "Another client");
    expect(theirs.consentShown).toBe(true);
    const code = new URL(theirs.back).searchParams.get("code")!;
    expect(code).toBeTruthy();
    // Delivered to the first instance with a state it issued to this browser.
    const started = await browser.fetch(`${app.url}/sso/start/${connectionId}`);
    const state = new URL(started.headers.get("location")!).searchParams.get("state")!;
    const injected = new URL(callback);
    injected.search = new URLSearchParams({ code, state, iss: idp.url }).toString();
    const res = await browser.fetch(injected.toString());
    expect(errorOf(res)).toBe("OAUTH_ERROR");
    expect(sidOf(res)).toBeUndefined();
    expect(providerRefusals()).toEqual(["invalid_grant", "invalid_grant"]);
    // The code itself was good: its own client redeems it, for an ID token whose audience is that client.
    const redeemed = await fetch(`${idp.url}/api/v1/oidc/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${otherClientId}:${otherSecret}`).toString("base64")}` },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: callback, code_verifier: verifier }),
    });
    expect(redeemed.status).toBe(200);
    const idToken = ((await redeemed.json()) as { id_token: string }).id_token;
    const claims = JSON.parse(Buffer.from(idToken.split(".")[1]!, "base64url").toString("utf8")) as { aud: string; iss: string; sub: string };
    expect(claims).toMatchObject({ aud: otherClientId, iss: idp.url, sub: alice.id });
  });

  it("has no groups to map from Keyward as a provider: its organizations claim holds objects, so the default role applies", async () => {
    const dept = await app.http.post(`/api/v1/organizations/${org.id}/departments`, { name: "Logistics" }, { token: admin.token });
    expect(dept.status).toBe(201);
    const changed = await app.http.patch(
      `${base(org.id)}/${connectionId}`,
      { scopes: ["openid", "email", "profile", "organizations"], groups_claim: "organizations", group_mappings: [{ group: idpOrg.id, role: "admin", department_ids: [dept.body.data.department.id] }] },
      { token: admin.token },
    );
    expect(changed.status, changed.text).toBe(200);
    // Bob is a member of the provider's organization, so his ID token's `organizations` names it.
    const bob = await newUser(idp, { email: at("bob"), fullName: "Bob Northwind" });
    const added = await idp.http.post(`/api/v1/organizations/${idpOrg.id}/members`, { email: bob.email, role: "member" }, { token: idpAdmin.token });
    expect(added.status, added.text).toBe(201);
    const invites = await idp.http.get("/api/v1/users/me/invites", { token: bob.token });
    const accepted = await idp.http.post(`/api/v1/users/me/invites/${invites.body.data.invites[0].id}/accept`, {}, { token: bob.token });
    expect(accepted.status).toBe(200);
    const signed = await signIn({ email: bob.email, password: bob.password });
    expect(signed.authorize.searchParams.get("scope")).toBe("openid email profile organizations");
    expect(signed.sid).toBeTruthy();
    const bobId = (await app.http.get("/api/v1/users/me", { cookie: signed.sid! })).body.data.user.id;
    expect(await membership(org.id, bobId)).toBe("guest");
    const login = (await ssoAudit(org.id)).filter((r) => r.action === "sso.login").at(-1)!;
    expect(login.metadata).toMatchObject({ subject: bob.id, newAccount: true, groups: [] });
  });
});
