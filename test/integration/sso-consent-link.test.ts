import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { Browser, startIdp, type RealIdp } from "../helpers/oidc-idp.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";
import { SoftAuthenticator } from "../helpers/soft-authenticator.js";
import { enrollTotp } from "../factories/mfa.js";
import { newUser, PASSWORD, type TestUser } from "../factories/users.js";
import { orgWithRoles } from "../factories/orgs.js";

/**
 * Issue 35: an SSO sign-in that finds an existing account not linked yet stores a pending link,
 * which its holder confirms by signing in as they do now (password with its second step, passkey,
 * or a mailed link for accounts with neither) in the same browser; with require_sso on, that
 * confirmation is the one way past SSO_REQUIRED, for that account only. Also: email-first
 * discovery that starts no flow, and `next` kept through the SSO sign-in. Against a REAL provider.
 */
let app: TestApp;
let idp: RealIdp;
let callback: string;
const tag = Date.now().toString(36);
const DOMAIN = `consent-${tag}.test`;
const at = (local: string) => `${local}@${DOMAIN}`;
const IDP_USERS = ["paula", "pia", "tom", "gail", "rex", "nina", "olaf", "eve"];

let org: { id: string };
let connectionId: string;
/** Existing accounts in the domain, made before the organization required SSO. */
const users: Record<string, TestUser> = {};

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_OAUTH: "1000/60", RATE_LIMIT_LOGIN_IP: "1000/60" });
  callback = `${app.url}/sso/oidc/callback`;
  idp = await startIdp({ redirectUri: callback, users: IDP_USERS.map((u) => `${at(u)}:${u}-pass:${u} Person:engineering`) });
  const { org: o, admin } = await orgWithRoles(app);
  org = o;
  await app.container.db.execute(sql`insert into organization_domains (organization_id, domain, verification_token, status, verified_at) values (${org.id}, ${DOMAIN}, ${`tok-${DOMAIN}`}, 'verified', now())`);
  const created = await app.http.post(
    `/api/v1/organizations/${org.id}/sso/connections/oidc`,
    { name: "Consent IdP", issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, default_role: "guest", group_mappings: [{ group: "engineering", role: "member" }] },
    { token: admin.token },
  );
  expect(created.status, created.text).toBe(201);
  connectionId = created.body.data.connection.id;
  for (const u of ["paula", "olaf", "pia", "tom", "gail", "rex", "eve"]) users[u] = await newUser(app, { email: at(u) });
  const required = await app.http.patch(`/api/v1/organizations/${org.id}/sso/connections/${connectionId}`, { require_sso: true, session_max_age_seconds: 600 }, { token: admin.token });
  expect(required.status).toBe(200);
});
afterAll(async () => {
  await app?.close();
  idp?.stop();
});

/** Start, the provider's form, the callback: where the browser lands, and its session cookie if any. */
async function ssoSignIn(start: string, local: string, browser = new Browser()) {
  const started = await browser.fetch(`${app.url}${start}`);
  expect(started.status, await started.clone().text()).toBe(303);
  const back = await browser.loginAtIdp(started.headers.get("location")!, { username: at(local), password: `${local}-pass` }, callback);
  const done = await browser.fetch(back);
  expect(done.status).toBe(303);
  const sid = done.headers.getSetCookie().find((c) => c.includes(".sid="))?.split(";")[0];
  return { landing: new URL(done.headers.get("location")!), sid, browser };
}

/** An SSO sign-in for `local`'s existing account: lands on the sign-in page with a pending link. */
async function pendingLink(local: string) {
  const { landing, sid, browser } = await ssoSignIn(`/sso/start?email=${encodeURIComponent(at(local))}`, local);
  expect(sid).toBeUndefined();
  expect(landing.pathname).toBe("/login");
  expect(landing.searchParams.get("email")).toBe(at(local));
  const id = landing.searchParams.get("sso_link")!;
  expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return { id, browser, cookie: browser.cookieHeader(app.url), landing };
}

const post = (path: string, body: unknown, cookie?: string) => app.http.post(`/api/v1${path}`, body, { ...(cookie ? { cookie } : {}), headers: { origin: app.url } });
const sidOf = (headers: Headers) => headers.getSetCookie().find((c) => c.includes(".sid="))?.split(";")[0];

async function identityCount(local: string) {
  const [row] = resultRows<{ n: number }>(await app.container.db.execute(sql`select count(*)::int as n from sso_identities i join users u on u.id = i.user_id where u.email = ${at(local)}`));
  return row!.n;
}

async function membership(userId: string) {
  const [row] = resultRows<{ role: string }>(await app.container.db.execute(sql`select role from org_memberships where organization_id = ${org.id} and user_id = ${userId} and deleted_at is null`));
  return row?.role ?? null;
}

async function linkedAudits(userId: string) {
  return resultRows<{ metadata: Record<string, unknown> }>(await app.container.db.execute(sql`select metadata from audit_logs where action = 'sso.linked' and user_id = ${userId} order by created_at, id`));
}

/** The session is the SSO connection's: bounded by its 600 s, and signs in as the account. */
async function expectSsoSession(sid: string, userId: string) {
  const sessions = await app.http.get("/api/v1/auth/sessions", { cookie: sid });
  expect(sessions.status).toBe(200);
  const current = sessions.body.data.sessions.find((s: { current: boolean }) => s.current);
  expect(new Date(current.expires_at).getTime() - app.clock.now().getTime()).toBeLessThanOrEqual(600_000 + 5_000);
  expect((await app.http.get("/api/v1/users/me", { cookie: sid })).body.data.user.id).toBe(userId);
}


describe("require_sso no longer dead-ends an existing unlinked account", () => {
  it("shows the pending link on the sign-in page, in this browser only, and links on the password's confirmation", async () => {
    const paula = users.paula!;
    // Without the pending link, the password is refused as before.
    expect((await post("/auth/login", { email: at("paula"), password: PASSWORD })).body.error.type).toBe("SSO_REQUIRED");
    const { id, cookie } = await pendingLink("paula");
    expect(await identityCount("paula")).toBe(0);
    const page = await app.http.get(`/login?sso_link=${id}&email=${encodeURIComponent(at("paula"))}`, { cookie });
    expect(page.text).toContain("Confirm it is you to link your account to Consent IdP");
    expect(page.text).toContain('id="sso-link"');
    expect(page.text).not.toContain('id="sso-link-mail"');
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    // Another browser sees no pending link.
    const elsewhere = await app.http.get(`/login?sso_link=${id}`);
    expect(elsewhere.text).toContain('id="sso-link-expired"');
    expect(elsewhere.text).not.toContain('id="sso-link"');

    // Another account's password with this pending link: refused as SSO_REQUIRED refuses it.
    const other = await post("/auth/login", { email: at("olaf"), password: PASSWORD, sso_link: id }, cookie);
    expect(other.status).toBe(403);
    expect(other.body.error.type).toBe("SSO_REQUIRED");
    // The right account from another browser (no binding cookie): the same.
    const otherBrowser = await post("/auth/login", { email: at("paula"), password: PASSWORD, sso_link: id });
    expect(otherBrowser.body.error.type).toBe("SSO_REQUIRED");
    const wrongCookie = await post("/auth/login", { email: at("paula"), password: PASSWORD, sso_link: id }, "keyward.sso-link=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    expect(wrongCookie.body.error.type).toBe("SSO_REQUIRED");
    // A wrong password looks like any wrong password (here: an account outside any SSO domain).
    const wrong = await post("/auth/login", { email: at("paula"), password: "not-the-password", sso_link: id }, cookie);
    const outsider = await newUser(app);
    const plainWrong = await post("/auth/login", { email: outsider.email, password: "not-the-password" });
    expect(wrong.status).toBe(plainWrong.status);
    expect(wrong.body.error.type).toBe(plainWrong.body.error.type);
    expect(wrong.body.message).toBe(plainWrong.body.message);
    expect(await identityCount("paula")).toBe(0);

    const ok = await post("/auth/login", { email: at("paula"), password: PASSWORD, sso_link: id }, cookie);
    expect(ok.status, ok.text).toBe(200);
    expect(await identityCount("paula")).toBe(1);
    expect(await membership(paula.id)).toBe("member");
    await expectSsoSession(sidOf(ok.headers)!, paula.id);
    const [linked] = await linkedAudits(paula.id);
    expect(linked!.metadata).toMatchObject({ connectionId, confirmedAtSignIn: true, method: "password" });

    // Used: the same pending link does nothing any more.
    expect((await post("/auth/login", { email: at("paula"), password: PASSWORD, sso_link: id }, cookie)).body.error.type).toBe("SSO_REQUIRED");
    // From now on the provider signs Paula in directly.
    const again = await ssoSignIn(`/sso/start/${connectionId}`, "paula");
    expect(again.sid).toBeDefined();
    expect((await app.http.get("/api/v1/users/me", { cookie: again.sid! })).body.data.user.id).toBe(paula.id);
  });

  it("confirms with a passkey, for the account the pending link names only", async () => {
    const pia = users.pia!;
    const authenticator = new SoftAuthenticator(app.url, "localhost");
    const reg = await app.http.post("/api/v1/auth/webauthn/register/begin", {}, { token: pia.token });
    const enrolled = await app.http.post("/api/v1/auth/webauthn/register/complete", { challenge_id: reg.body.data.challenge_id, response: authenticator.register(reg.body.data.options), name: "Laptop" }, { token: pia.token });
    expect(enrolled.status, enrolled.text).toBe(201);
    const passkey = async (id: string | undefined, cookie?: string) => {
      const begin = await post("/auth/webauthn/login/begin", {}, cookie);
      return post("/auth/webauthn/login/complete", { challenge_id: begin.body.data.challenge_id, response: authenticator.assert(begin.body.data.options), ...(id ? { sso_link: id } : {}) }, cookie);
    };
    expect((await passkey(undefined)).body.error.type).toBe("SSO_REQUIRED");
    // Olaf's pending link does not let Pia's passkey in.
    const { id: olafLink, cookie: olafCookie } = await pendingLink("olaf");
    expect((await passkey(olafLink, olafCookie)).body.error.type).toBe("SSO_REQUIRED");
    const { id, cookie } = await pendingLink("pia");
    // Another browser.
    expect((await passkey(id)).body.error.type).toBe("SSO_REQUIRED");
    const ok = await passkey(id, cookie);
    expect(ok.status, ok.text).toBe(200);
    expect(await identityCount("pia")).toBe(1);
    await expectSsoSession(sidOf(ok.headers)!, pia.id);
    expect((await linkedAudits(pia.id))[0]!.metadata).toMatchObject({ method: "passkey", confirmedAtSignIn: true });
  });

  it("asks for the second step of an account with TOTP before linking", async () => {
    const tom = users.tom!;
    const { secret, backupCodes } = await enrollTotp(app, tom);
    const { id, cookie } = await pendingLink("tom");
    // The second step from another browser (without the pending link's cookie): refused as SSO_REQUIRED.
    const elsewhere = await post("/auth/login", { email: at("tom"), password: PASSWORD, sso_link: id }, cookie);
    expect(elsewhere.body.data.requires_mfa).toBe(true);
    const stolen = await post("/auth/mfa/backup-code", { mfa_token: elsewhere.body.data.mfa_token, code: backupCodes![0] });
    expect(stolen.status).toBe(403);
    expect(stolen.body.error.type).toBe("SSO_REQUIRED");
    expect(await identityCount("tom")).toBe(0);
    const first = await post("/auth/login", { email: at("tom"), password: PASSWORD, sso_link: id }, cookie);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.requires_mfa).toBe(true);
    expect(first.headers.getSetCookie().some((c) => c.includes(".sid="))).toBe(false);
    expect(await identityCount("tom")).toBe(0);
    const done = await post("/auth/totp/verify", { mfa_token: first.body.data.mfa_token, code: totpCode(secret, totpStep(app.clock.now())) }, cookie);
    expect(done.status, done.text).toBe(200);
    expect(await identityCount("tom")).toBe(1);
    await expectSsoSession(sidOf(done.headers)!, tom.id);
    expect((await linkedAudits(tom.id))[0]!.metadata).toMatchObject({ method: "password+totp" });
  });

  it("mails a one-time link to an account with neither password nor passkey, usable once in this browser", async () => {
    const gail = users.gail!;
    await app.container.db.execute(sql`delete from password_credentials where user_id = ${gail.id}`);
    // An account that has a password confirms with it, not by mail.
    const { id: olafLink, cookie: olafCookie } = await pendingLink("olaf");
    const refusedMail = await post("/auth/sso/link/email", { sso_link: olafLink }, olafCookie);
    expect(refusedMail.status).toBe(409);
    expect(refusedMail.body.error.type).toBe("SSO_LINK_CONFIRM_WITH_SIGN_IN");

    const { id, cookie } = await pendingLink("gail");
    const page = await app.http.get(`/login?sso_link=${id}`, { cookie });
    expect(page.text).toContain('id="sso-link-mail"');
    // Another browser cannot have it mailed.
    expect((await post("/auth/sso/link/email", { sso_link: id })).body.error.type).toBe("SSO_LINK_INVALID");
    const sent = await post("/auth/sso/link/email", { sso_link: id }, cookie);
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.data).toMatchObject({ email: at("gail"), expires_in_minutes: 15 });
    // Mailing used the pending link up.
    expect((await post("/auth/sso/link/email", { sso_link: id }, cookie)).body.error.type).toBe("SSO_LINK_INVALID");
    await app.flushEmails();
    const mail = app.mail.lastWith(at("gail"), "/sso/link/confirm?token=")!;
    expect(mail.subject).toContain("Consent IdP");
    const token = tokenFrom(linkIn(mail, "/sso/link/confirm"));
    // Its page never spends it (a mail scanner changes nothing).
    const confirmPage = await app.http.get(`/sso/link/confirm?token=${token}`);
    expect(confirmPage.text).toContain('data-api="/auth/sso/link/email/confirm"');
    expect(await identityCount("gail")).toBe(0);
    // Opened in another browser: refused, and not used up.
    expect((await post("/auth/sso/link/email/confirm", { token })).body.error.type).toBe("SSO_LINK_INVALID");
    const ok = await post("/auth/sso/link/email/confirm", { token }, cookie);
    expect(ok.status, ok.text).toBe(200);
    expect(await identityCount("gail")).toBe(1);
    await expectSsoSession(sidOf(ok.headers)!, gail.id);
    // The sign-in asked for no next: the page's Continue stays on /.
    expect(ok.body.data.redirect_to).toBe("/");
    expect((await linkedAudits(gail.id))[0]!.metadata).toMatchObject({ method: "email", confirmedAtSignIn: true });
    // Once only.
    expect((await post("/auth/sso/link/email/confirm", { token }, cookie)).body.error.type).toBe("SSO_LINK_INVALID");
  });

  it("links once for twenty parallel confirmations of one pending link", async () => {
    const rex = users.rex!;
    const { id, cookie } = await pendingLink("rex");
    const results = await Promise.all(Array.from({ length: 20 }, () => post("/auth/login", { email: at("rex"), password: PASSWORD, sso_link: id }, cookie)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.every((r) => r.status === 200 || r.status >= 400)).toBe(true);
    expect(await identityCount("rex")).toBe(1);
    expect(await linkedAudits(rex.id)).toHaveLength(1);
    const [sessions] = resultRows<{ n: number }>(await app.container.db.execute(sql`select count(*)::int as n from audit_logs where action = 'user.login' and user_id = ${rex.id}`));
    // newUser's own sign-in, and the one confirmation.
    expect(sessions!.n).toBe(2);
  });
});

describe("email-first discovery starts no flow", () => {
  it("answers by domain only: the same for unknown and known accounts without SSO", async () => {
    const discover = (email: string) => post("/auth/sso/discover", { email });
    const routed = await discover(at("nobody-yet"));
    expect(routed.status).toBe(200);
    expect(routed.body.data.sso).toBe(true);
    expect(new URL(routed.body.data.start_url).pathname).toBe("/sso/start");
    expect(new URL(routed.body.data.start_url).searchParams.get("email")).toBe(at("nobody-yet"));
    // It starts nothing: no binding cookie.
    expect(routed.headers.getSetCookie().some((c) => c.includes("keyward.sso"))).toBe(false);
    const known = await newUser(app);
    const answers = await Promise.all([discover(known.email), discover(`nobody-${tag}@example.com`), discover(`x@unverified-${tag}.test`)]);
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body.data).toEqual({ sso: false, start_url: null });
      expect(a.body.message).toBe(answers[0]!.body.message);
    }
    expect((await discover("not an address at all but long")).status).toBe(200);
    expect((await discover("")).status).toBe(400);
  });
});

describe("discovery's own limit", () => {
  it("counts against the sign-in limiter per client address, not the flow-start one", async () => {
    const limited = await startTestApp({ RATE_LIMIT_LOGIN_IP: "3/60", RATE_LIMIT_OAUTH: "1/60" });
    try {
      const discover = () => limited.http.post("/api/v1/auth/sso/discover", { email: `someone-${tag}@example.com` }, { headers: { origin: limited.url } });
      // More than the one flow start RATE_LIMIT_OAUTH allows.
      for (let i = 0; i < 3; i++) expect((await discover()).status).toBe(200);
      const over = await discover();
      expect(over.status).toBe(429);
      expect(over.body.error.type).toBe("RATE_LIMIT_EXCEEDED");
    } finally {
      await limited.close();
    }
  });
});

describe("SSO sign-in honours next", () => {
  it("lands on a same-origin next and ignores an absolute or protocol-relative one", async () => {
    const toNext = await ssoSignIn(`/sso/start?email=${encodeURIComponent(at("nina"))}&next=${encodeURIComponent("/account/security?tab=1")}`, "nina");
    expect(toNext.sid).toBeDefined();
    expect(toNext.landing.origin).toBe(new URL(app.url).origin);
    expect(toNext.landing.pathname + toNext.landing.search).toBe("/account/security?tab=1");
    const byConnection = await ssoSignIn(`/sso/start/${connectionId}?next=${encodeURIComponent("/account")}`, "nina");
    expect(byConnection.landing.pathname).toBe("/account");
    for (const evil of ["//evil.example/x", "https://evil.example/", "/\\evil.example"]) {
      const ignored = await ssoSignIn(`/sso/start/${connectionId}?next=${encodeURIComponent(evil)}`, "nina");
      expect(ignored.sid).toBeDefined();
      expect(ignored.landing.host).not.toContain("evil");
      expect(ignored.landing.pathname).toBe("/");
    }
    // A pending link keeps it for after the confirmation.
    const pending = await ssoSignIn(`/sso/start?email=${encodeURIComponent(at("eve"))}&next=${encodeURIComponent("/account")}`, "eve");
    expect(pending.landing.pathname).toBe("/login");
    expect(pending.landing.searchParams.get("next")).toBe("/account");
  });
});

describe("an expired pending link", () => {
  // Last: the clock moves forward.
  it("is refused after its ten minutes, as SSO_REQUIRED refuses", async () => {
    const { id, cookie } = await pendingLink("olaf");
    app.clock.advance(11 * 60);
    const late = await post("/auth/login", { email: at("olaf"), password: PASSWORD, sso_link: id }, cookie);
    expect(late.status).toBe(403);
    expect(late.body.error.type).toBe("SSO_REQUIRED");
    expect((await app.http.get(`/login?sso_link=${id}`, { cookie })).text).toContain('id="sso-link-expired"');
  });
});
