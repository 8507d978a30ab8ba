import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "../../../src/infra/db.js";
import { externalIdpSuite, githubAccount, newBrowser, runExternalFlow } from "../../helpers/external-idp.js";
import { sessionCookie } from "../../helpers/http.js";
import { linkIn, tokenFrom } from "../../helpers/smtp-sink.js";
import { invite, newOrg } from "../../factories/orgs.js";
import { login, newUser, uniqueEmail, PASSWORD } from "../../factories/users.js";

/**
 * The account console's self-service routes attacked: email change (what it does to links mailed
 * to the old address, and to accounts with no password to confirm with), signing out the other
 * sessions, declining an invitation, and the sign-ins a foreign page could force on a browser.
 */
const suite = externalIdpSuite();
const EVIL = "https://evil.example";

const auditCount = async (action: string, userId: string): Promise<number> => {
  const rows = resultRows<{ n: number }>(
    await suite.app.container.db.execute(sql`select count(*)::int as n from audit_logs where action = ${action} and user_id = ${userId}`),
  );
  return Number(rows[0]?.n ?? 0);
};

const mailedToken = async (to: string, path: string) => {
  await suite.app.flushEmails();
  return tokenFrom(linkIn(suite.app.mail.lastWith(to, `${path}?token=`), path));
};

describe("email change", () => {
  it("voids the password-reset links mailed to the old address once the new one is proven", async () => {
    const { app } = suite;
    const user = await newUser(app);
    await app.http.post("/api/v1/auth/forgot-password", { email: user.email });
    const oldReset = await mailedToken(user.email, "/reset-password");
    const next = uniqueEmail("moved");
    expect((await app.http.post("/api/v1/users/me/email", { new_email: next, password: user.password }, { token: user.token })).status).toBe(200);
    const change = await mailedToken(next, "/verify-email");
    expect((await app.http.post("/api/v1/auth/verify-email", { token: change })).status).toBe(200);

    // Whoever reads the old mailbox cannot take the account back with the link sent there.
    const stale = await app.http.post("/api/v1/auth/reset-password", { token: oldReset, password: "taken over by the old mailbox" });
    expect(stale.status).toBe(400);
    expect(stale.body.error.type).toBe("INVALID_LINK");
    expect((await login(app, next, user.password)).status).toBe(200);
    expect(await auditCount("user.email_change.requested", user.id)).toBe(1);
    expect(await auditCount("user.email_change.completed", user.id)).toBe(1);
  });

  it("asks an account with no password for a sign-in of the last 10 minutes", async () => {
    const { app, idps } = suite;
    const email = uniqueEmail("octo");
    idps.github.signIn(githubAccount(email));
    const browser = newBrowser(app);
    const flow = await runExternalFlow(app, browser, "github");
    expect(flow.landing?.pathname).not.toContain("error");
    const me = await browser.fetch(`${app.url}/api/v1/auth/me`);
    const userId = (await me.json()).data.user.id as string;
    const change = (newEmail: string) =>
      browser.fetch(`${app.url}/api/v1/users/me/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: app.url },
        body: JSON.stringify({ new_email: newEmail }),
      });

    expect((await change(uniqueEmail("fresh"))).status).toBe(200);
    app.clock.advance(11 * 60);
    try {
      const stale = await change(uniqueEmail("stale"));
      expect(stale.status).toBe(403);
      expect((await stale.json()).error.type).toBe("RECENT_SIGN_IN_REQUIRED");
    } finally {
      app.clock.reset();
    }
    expect(await auditCount("user.email_change.requested", userId)).toBe(1);
  });

  it("refuses outsiders, cross-site cookies and malformed input, and changes nothing", async () => {
    const { app } = suite;
    const user = await newUser(app);
    const cookie = sessionCookie((await login(app, user.email)).headers);
    const body = { new_email: uniqueEmail("x"), password: user.password };

    expect((await app.http.post("/api/v1/users/me/email", body)).status).toBe(401);
    const crossSite = await app.http.post("/api/v1/users/me/email", body, { cookie, headers: { origin: EVIL } });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.error.type).toBe("CSRF_CHECK_FAILED");
    for (const bad of [{}, { new_email: 42, password: user.password }, { new_email: "not an address", password: user.password }, { new_email: `${"a".repeat(400)}@example.com`, password: user.password }, { new_email: "a\u0000b@example.com", password: user.password }]) {
      const res = await app.http.post("/api/v1/users/me/email", bad, { token: user.token });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error.type).toBe("VALIDATION_ERROR");
    }
    expect(await auditCount("user.email_change.requested", user.id)).toBe(0);
  });

  it("opening one of many parallel requests' links voids all the others", async () => {
    const { app } = suite;
    const user = await newUser(app);
    const targets = Array.from({ length: 20 }, (_, i) => uniqueEmail(`p${i}`));
    const answers = await Promise.all(targets.map((t) => app.http.post("/api/v1/users/me/email", { new_email: t, password: user.password }, { token: user.token })));
    expect(answers.map((a) => a.status).every((s) => s === 200)).toBe(true);
    await app.flushEmails();
    const tokens = targets.map((t) => tokenFrom(linkIn(app.mail.lastWith(t, "/verify-email?token="), "/verify-email")));
    const opened = await Promise.all(tokens.map((token) => app.http.post("/api/v1/auth/verify-email", { token })));
    const won = opened.filter((o) => o.status === 200);
    expect(won).toHaveLength(1);
    expect(opened.filter((o) => o.status >= 500)).toEqual([]);
    const email = (await app.http.get("/api/v1/users/me", { token: user.token })).body.data.user.email;
    expect(targets).toContain(email);
    expect(won[0]!.body.data.user.email).toBe(email);
  });
});

describe("password reset", () => {
  it("opening many of one account's reset links at once sets one password and refuses the others, never a 5xx", async () => {
    const { app } = suite;
    const user = await newUser(app);
    for (let i = 0; i < 8; i++) await app.http.post("/api/v1/auth/forgot-password", { email: user.email });
    await app.flushEmails();
    const tokens = app.mail.to(user.email).filter((m) => m.text.includes("/reset-password?token=")).map((m) => tokenFrom(linkIn(m, "/reset-password")));
    expect(tokens).toHaveLength(8);
    const opened = await Promise.all(tokens.map((token, i) => app.http.post("/api/v1/auth/reset-password", { token, password: `a brand new passphrase ${i}` })));
    // The account is locked before its link is taken: the links queue instead of deadlocking on PostgreSQL.
    expect(opened.filter((o) => o.status >= 500)).toEqual([]);
    const won = opened.findIndex((o) => o.status === 200);
    expect(opened.filter((o) => o.status === 200)).toHaveLength(1);
    expect(opened.filter((o) => o.status !== 200).every((o) => o.body.error.type === "INVALID_LINK")).toBe(true);
    expect((await login(app, user.email, `a brand new passphrase ${won}`)).status).toBe(200);
  });
});

describe("signing out the other sessions", () => {
  it("is refused cross-site and to outsiders, and twenty parallel calls keep the caller's own session", async () => {
    const { app } = suite;
    const user = await newUser(app);
    const others = await Promise.all(Array.from({ length: 3 }, async () => (await login(app, user.email)).body.data.token as string));
    const cookie = sessionCookie((await login(app, user.email)).headers);

    expect((await app.http.delete("/api/v1/auth/sessions")).status).toBe(401);
    const crossSite = await app.http.delete("/api/v1/auth/sessions", { cookie, headers: { origin: EVIL } });
    expect(crossSite.body.error.type).toBe("CSRF_CHECK_FAILED");
    const crossSiteFetch = await app.http.delete("/api/v1/auth/sessions", { cookie, headers: { "sec-fetch-site": "cross-site" } });
    expect(crossSiteFetch.status).toBe(403);
    for (const t of others) expect((await app.http.get("/api/v1/auth/me", { token: t })).status).toBe(200);

    const calls = await Promise.all(Array.from({ length: 20 }, () => app.http.delete("/api/v1/auth/sessions", { token: user.token })));
    expect(calls.map((c) => c.status)).toEqual(Array(20).fill(200));
    expect(calls.reduce((sum, c) => sum + c.body.data.revoked, 0)).toBe(4);
    expect((await app.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(200);
    for (const t of others) expect((await app.http.get("/api/v1/auth/me", { token: t })).status).toBe(401);
    expect(await auditCount("session.revoke_others", user.id)).toBe(20);
  });
});

describe("declining an invitation", () => {
  it("twenty parallel declines close it once; another organization's admin cannot decline it", async () => {
    const { app } = suite;
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    const otherAdmin = await newUser(app);
    await newOrg(app, otherAdmin);
    const invitee = await newUser(app);
    await invite(app, org.id, owner, invitee.email);
    const [pending] = (await app.http.get("/api/v1/users/me/invites", { token: invitee.token })).body.data.invites;

    expect((await app.http.post(`/api/v1/users/me/invites/${pending.id}/decline`, {})).status).toBe(401);
    expect((await app.http.post(`/api/v1/users/me/invites/${pending.id}/decline`, {}, { token: otherAdmin.token })).status).toBe(404);
    expect((await app.http.post(`/api/v1/users/me/invites/${pending.id}/decline`, {}, { token: owner.token })).status).toBe(404);

    const calls = await Promise.all(Array.from({ length: 20 }, () => app.http.post(`/api/v1/users/me/invites/${pending.id}/decline`, {}, { token: invitee.token })));
    expect(calls.filter((c) => c.status === 200)).toHaveLength(1);
    expect(calls.filter((c) => c.status !== 200).every((c) => c.body.error.type === "INVITE_NOT_FOUND")).toBe(true);
    expect(await auditCount("ORG_INVITE_DECLINED", invitee.id)).toBe(1);
  });
});

describe("sign-ins a foreign page could force on a browser (login CSRF)", () => {
  it("refuses a cross-site sign-in or invitation acceptance, which would set the session cookie", async () => {
    const { app } = suite;
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    const attacker = await newUser(app);
    const newcomer = uniqueEmail("invited");
    const token = await invite(app, org.id, owner, newcomer);
    const registration = { full_name: "Planted", password: PASSWORD };

    const foreignLogin = await app.http.post("/api/v1/auth/login", { email: attacker.email, password: attacker.password }, { headers: { origin: EVIL } });
    expect(foreignLogin.status).toBe(403);
    expect(foreignLogin.body.error.type).toBe("CSRF_CHECK_FAILED");
    expect(foreignLogin.headers.getSetCookie()).toEqual([]);
    const noOrigin = await app.http.post("/api/v1/auth/login", { email: attacker.email, password: attacker.password }, { headers: { "sec-fetch-site": "cross-site" } });
    expect(noOrigin.status).toBe(403);
    const nullOrigin = await app.http.post(`/api/v1/invites/${token}/accept`, registration, { headers: { origin: "null" } });
    expect(nullOrigin.status).toBe(403);
    const foreignAccept = await app.http.post(`/api/v1/invites/${token}/accept`, registration, { headers: { origin: EVIL } });
    expect(foreignAccept.status).toBe(403);
    expect(foreignAccept.headers.getSetCookie()).toEqual([]);
    expect((await app.http.get(`/api/v1/invites/${token}`)).status).toBe(200);

    // From the hosted page (same origin), and from a client that is not a browser, both work.
    const own = await app.http.post(`/api/v1/invites/${token}/accept`, registration, { headers: { origin: app.url } });
    expect(own.status, own.text).toBe(200);
    expect(sessionCookie(own.headers)).toContain(".sid=");
    expect((await login(app, attacker.email, attacker.password)).status).toBe(200);
  });
});
