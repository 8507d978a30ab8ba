import { readdirSync, readFileSync } from "node:fs";
import { runInNewContext } from "node:vm";
import * as oc from "openid-client";
import { describe, expect, it } from "vitest";
import { escapeHtml } from "../../../src/pages/layout.js";
import { externalIdpSuite } from "../../helpers/external-idp.js";
import { sessionCookie } from "../../helpers/http.js";
import { OidcAgent } from "../../helpers/oidc-agent.js";
import { discover } from "../../helpers/oidc-rp.js";
import { linkIn, tokenFrom } from "../../helpers/smtp-sink.js";
import { REDIRECT, registerClient } from "../../factories/oidc.js";
import { invite, newOrg } from "../../factories/orgs.js";
import { newUser, uniqueEmail } from "../../factories/users.js";

/**
 * The hosted pages attacked with markup: every name, address, comment, login and query value an
 * attacker can choose is stored or sent with script payloads, then each page that shows it is
 * fetched. A payload may appear only as text: escaped, never as a tag, an attribute, an event
 * handler, a script or a javascript: URL. The pages run under a CSP with no inline script, their
 * scripts write no HTML, and `next` only ever leads to a path on this site.
 */
const suite = externalIdpSuite();

const SCRIPT = "<script>alert(1)</script>";
const ATTR = `"><img src=x onerror=alert(1)>`;
const SINGLE = `'><svg onload=alert(1)>`;
const TICK = "`${alert(document.cookie)}`";
const JS_URL = "javascript:alert(1)";
/** Every payload at once: fits the 255 characters names may have. */
const HOSTILE = `X ${SCRIPT} ${ATTR} ${SINGLE} ${TICK} ${JS_URL}`;

/** The entities a browser decodes in attribute values (escapeHtml writes decimal references). */
const decode = (v: string) => v.replace(/&#(\d+);/g, (_m, n) => String.fromCharCode(Number(n))).replace(/&amp;/g, "&").replace(/&quot;/g, '"');

/**
 * The page holds no markup an attacker wrote: the raw payloads are absent, and read tag by tag
 * (escaped values hold no `>` or `"`, so a tag ends at the first `>`), no tag carries an event
 * handler, a script is only ever one of the page's own files, and no URL attribute runs script.
 */
function expectInert(html: string, where: string): void {
  for (const raw of [SCRIPT, ATTR, SINGLE, "<img src=x", "<svg onload", "<script>alert"]) expect(html, `${where}: raw ${raw}`).not.toContain(raw);
  for (const [, name, attrs] of html.matchAll(/<([a-zA-Z][\w-]*)([^>]*)>/g)) {
    const names = attrs!.replace(/"[^"]*"/g, '""');
    expect(names, `${where}: <${name}${attrs}>`).not.toMatch(/(^|\s)on[a-z]+\s*=/i);
    expect(names, `${where}: <${name}${attrs}> has an unquoted value`).not.toMatch(/=\s*[^\s"]/);
    if (name!.toLowerCase() === "script") expect(attrs, where).toMatch(/^ src="\/assets\/[a-z0-9-]+\.js" defer$/);
    expect(["iframe", "object", "embed", "base", "svg", "img"].includes(name!.toLowerCase()) && !/id="totp-qr"|class="logo"/.test(attrs!), `${where}: <${name}${attrs}>`).toBe(false);
    for (const [, attr, value] of attrs!.matchAll(/\s([a-zA-Z:-]+)="([^"]*)"/g)) {
      if (/^(href|src|action|formaction|xlink:href)$/i.test(attr!)) {
        expect(decode(value!).replace(/[\s\u0000-\u001f]/g, ""), `${where}: ${attr}="${value}"`).not.toMatch(/^(javascript|data:text|vbscript):?/i);
      }
    }
  }
  expect(html.match(/<\/script>/g)?.length ?? 0, where).toBe(html.match(/<script /g)?.length ?? 0);
}

/** The payload is on the page, escaped (so the data was really shown, and shown as text). */
const expectEscaped = (html: string, value: string, where: string) => expect(html, where).toContain(escapeHtml(value));

/** A hosted page, fetched like a browser, with the headers every such page must carry. */
async function getPage(path: string, cookie?: string, expected = 200): Promise<string> {
  const res = await suite.app.http.get(path, { cookie, headers: { accept: "text/html" } });
  expect(res.status, `${path}: ${res.text.slice(0, 200)}`).toBe(expected);
  expect(res.headers.get("content-type"), path).toMatch(/^text\/html/);
  expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
  expectStrictCsp(res.headers.get("content-security-policy"), path);
  return res.text;
}

/** No inline script or style, no eval, nothing from elsewhere, no framing, no <base>. */
function expectStrictCsp(csp: string | null, where: string): void {
  expect(csp, where).toBeTruthy();
  const directives = new Map(csp!.split(";").map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k!, v]));
  expect(directives.get("default-src"), where).toEqual(["'none'"]);
  expect(directives.get("script-src"), where).toEqual(["'self'"]);
  expect(directives.get("style-src"), where).toEqual(["'self'"]);
  expect(directives.get("frame-ancestors"), where).toEqual(["'none'"]);
  expect(directives.get("base-uri"), where).toEqual(["'none'"]);
  expect(csp, where).not.toMatch(/unsafe-|\*|http:|https:|data:[^;]*script/);
}

const cookieOf = async (user: { email: string; password: string }, headers: Record<string, string> = {}) => {
  const res = await suite.app.http.post("/api/v1/auth/login", { email: user.email, password: user.password }, { headers });
  expect(res.status, res.text).toBe(200);
  return sessionCookie(res.headers);
};

describe("the consent page shows hostile data as text", () => {
  it("an application (OIDC client) with a hostile name", async () => {
    const { app } = suite;
    const admin = await newUser(app);
    const org = await newOrg(app, admin, `${HOSTILE} RP owner`);
    const client = await registerClient(app, org.id, admin, { name: HOSTILE });
    const user = await newUser(app);
    const agent = new OidcAgent(app.url);
    await agent.signIn(user.email, user.password);
    const config = await discover(app.url, client);
    const verifier = oc.randomPKCECodeVerifier();
    const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid email", code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" });

    const consent = await agent.follow(url.toString(), REDIRECT, "stop");
    expect(consent.status).toBe(200);
    expectInert(consent.body, "consent page");
    expectEscaped(consent.body, HOSTILE, "consent page");
    expect((await agent.follow(url.toString(), REDIRECT, "allow")).url.startsWith(REDIRECT)).toBe(true);
  });
});

describe("the emailed-link pages show hostile data and query values as text", () => {
  it("the invitation page, for a visitor, the invitee and someone else, names the organization escaped", async () => {
    const { app } = suite;
    const owner = await newUser(app);
    const org = await newOrg(app, owner, `${HOSTILE} invites`);
    const invitee = await newUser(app);
    const token = await invite(app, org.id, owner, invitee.email);
    const newcomer = await invite(app, org.id, owner, uniqueEmail("newcomer"));
    const stranger = await newUser(app);
    for (const [who, cookie, t] of [
      ["visitor, existing account", undefined, token],
      ["visitor, new account", undefined, newcomer],
      ["invitee", await cookieOf(invitee), token],
      ["someone else", await cookieOf(stranger), token],
    ] as const) {
      const html = await getPage(`/invite?token=${encodeURIComponent(t)}`, cookie);
      expectInert(html, `/invite as ${who}`);
      expect(html).toContain(`<title>Join ${escapeHtml(`${HOSTILE} invites`)} · `);
      expect(html).toContain(`<dd id="invite-org">${escapeHtml(`${HOSTILE} invites`)}</dd>`);
    }
  });

  it("the activation link of a provisioned account names the managing organization escaped", async () => {
    const { app } = suite;
    const owner = await newUser(app);
    const org = await newOrg(app, owner, `${HOSTILE} provisions`);
    const email = uniqueEmail("provisioned");
    expect((await app.http.post(`/api/v1/organizations/${org.id}/members`, { email, role: "member" }, { token: owner.token })).status).toBe(201);
    await app.flushEmails();
    const code = tokenFrom(linkIn(app.mail.lastWith(email, "/activate?code="), "/activate"), "code");
    const html = await getPage(`/activate?code=${encodeURIComponent(code)}`);
    expectInert(html, "/activate");
    expect(html).toContain(`id="managed-notice">Your account will be managed by <strong>${escapeHtml(`${HOSTILE} provisions`)}</strong>`);
  });

  it("tokens, codes and error parameters from the URL stay inside their attribute or are not shown at all", async () => {
    const q = encodeURIComponent(HOSTILE);
    for (const [path, field] of [
      [`/verify-email?token=${q}`, "token"],
      [`/reset-password?token=${q}`, "token"],
      [`/activate?code=${q}`, "code"],
    ] as const) {
      const html = await getPage(path);
      expectInert(html, path);
      expect(html, path).toContain(`<input type="hidden" name="${field}" value="${escapeHtml(HOSTILE)}">`);
    }
    // An unknown invitation answers in the service's words, not the link's.
    const unknown = await getPage(`/invite?token=${q}`, undefined, 404);
    expectInert(unknown, "/invite unknown");
    expect(unknown).not.toContain("alert(1)");
    // The sign-in page is static: its script reads error_type and next, the server echoes neither.
    for (const path of [`/login?error_type=${q}&error=${q}&next=${q}&mfa=${q}`, `/?next=${q}`, `/forgot-password?email=${q}`, `/register?next=${q}&email=${q}`]) {
      const html = await getPage(path);
      expectInert(html, path);
      expect(html, path).not.toContain("alert(1)");
    }
    // The command-line sign-in: an unknown token is named only inside its data attribute, if at all.
    const user = await newUser(suite.app);
    const cli = await getPage(`/cli/authorize?cli_token=${q}`, await cookieOf(user));
    expectInert(cli, "/cli/authorize");
    expect(cli).not.toContain("alert(1)");
  });

  it("a repeated query parameter is treated as absent, not joined into the page", async () => {
    const html = await getPage(`/verify-email?token=a&token=${encodeURIComponent(ATTR)}`);
    expectInert(html, "/verify-email repeated");
    expect(html).not.toContain('name="token"');
  });
});

describe("next: only a path on this site", () => {
  const EVIL_NEXT = ["//evil.example", "//evil.example/account", "/\\evil.example", "\\\\evil.example", "https://evil.example/", "javascript:alert(1)", "JavaScript:alert(1)//", "/\t/evil.example", " /account", "/account\nx", "data:text/html,<script>alert(1)</script>"];

  it("the registration page carries only a same-site path on to sign-in", async () => {
    for (const next of EVIL_NEXT) {
      const html = await getPage(`/register?next=${encodeURIComponent(next)}`);
      expect(html, next).not.toMatch(/href="\/login\?next=/);
      expect(html, next).toContain(`href="/login"`);
    }
    const html = await getPage(`/register?next=${encodeURIComponent("/invite?token=abc")}`);
    expect(html).toContain(`href="/login?next=${escapeHtml(encodeURIComponent("/invite?token=abc"))}"`);
  });

  it("an external sign-in refuses to come back anywhere else", async () => {
    for (const next of EVIL_NEXT) {
      const res = await suite.app.http.get(`/api/v1/auth/external/github/authorize?flow=login&next=${encodeURIComponent(next)}`);
      expect(res.status, next).toBe(400);
    }
  });

  it("the sign-in page's script goes to the web app's home after signing in unless next is a same-site path", async () => {
    for (const next of EVIL_NEXT) {
      const run = await runLoginScript(`?next=${encodeURIComponent(next)}`);
      expect(run.assigned, next).toEqual(["/"]);
      expect(run.registerHref, next).toBe("/register");
    }
    for (const next of ["/account/security", "/invite?token=abc", "/api/v1/oidc/interaction/x", "/%2F%2Fevil.example"]) {
      const run = await runLoginScript(`?next=${encodeURIComponent(next)}`);
      expect(run.assigned, next).toEqual([next]);
      expect(run.registerHref).toBe(`/register?next=${encodeURIComponent(next)}`);
    }
    // A crafted error code shows our own generic words, never the link's text.
    const crafted = await runLoginScript(`?error_type=${encodeURIComponent(HOSTILE)}&error=${encodeURIComponent(HOSTILE)}`, false);
    expect(crafted.alert).toBe("The sign-in could not be completed. Try again.");
    expect((await runLoginScript("?error_type=__proto__", false)).alert).toBe("The sign-in could not be completed. Try again.");
  });
});

describe("the pages' own scripts and assets", () => {
  const ASSETS = new URL("../../../src/pages/assets/", import.meta.url);
  const scripts = readdirSync(ASSETS).filter((f) => f.endsWith(".js"));

  it("write no HTML: text goes in with textContent, markup only comes from the server's own page", () => {
    expect(scripts.length).toBeGreaterThan(0);
    for (const file of scripts) {
      const source = readFileSync(new URL(file, ASSETS), "utf8");
      expect(source, file).not.toMatch(/\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setTimeout\(\s*["'`]|\.setAttribute\(\s*["']on/);
      expect(source, file).not.toMatch(/createContextualFragment|srcdoc/);
    }
  });

  it("the web app writes no HTML from data either: React renders text, and nothing bypasses it", () => {
    const WEB = new URL("../../../web/src/", import.meta.url);
    const files = (readdirSync(WEB, { recursive: true }) as string[]).filter((f) => /\.tsx?$/.test(f) && !f.endsWith(".d.ts"));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const source = readFileSync(new URL(file, WEB), "utf8");
      expect(source, file).not.toMatch(/dangerouslySetInnerHTML|\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|createContextualFragment|srcdoc/);
    }
  });

  it("every script and stylesheet a page references is served, with its type and nosniff", async () => {
    const user = await newUser(suite.app);
    const cookie = await cookieOf(user);
    const pages = await Promise.all(["/login", "/register", "/verify-email", "/forgot-password", "/reset-password?token=x", "/activate?code=x", "/cli/authorize"].map((p) => getPage(p, cookie)));
    pages.push(await getPage("/"));
    const referenced = new Set(pages.flatMap((html) => [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!)));
    expect(referenced).toContain("/assets/keyward.js");
    expect(referenced).toContain("/assets/flows.js");
    for (const path of referenced) {
      const res = await fetch(suite.app.url + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type"), path).toMatch(path.endsWith(".css") ? /^text\/css/ : path.endsWith(".svg") ? /^image\/svg\+xml/ : /^application\/javascript/);
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
    }
    // The account console's scripts went with it (the web app's account screens replace them).
    for (const path of ["/assets/__proto__", "/assets/constructor", "/assets/..%2Fpages.ts", "/assets/keyward.js%00", "/assets/account.js", "/assets/account-two-step.js"]) {
      expect((await fetch(suite.app.url + path)).status, path).toBe(404);
    }
  });

  it("escapeHtml encodes every character that can end a text run, a quoted value or a template", () => {
    expect(escapeHtml(`&<>"'\``)).toBe("&#38;&#60;&#62;&#34;&#39;&#96;");
    expect(escapeHtml("&#60;")).toBe("&#38;#60;");
    expect(escapeHtml("plain text, unchanged")).toBe("plain text, unchanged");
  });
});

/** A stand-in element: enough of the DOM for the scripts' start-up and their handlers. */
function fakeElement(id: string) {
  const listeners: Record<string, (e: unknown) => unknown> = {};
  return {
    id,
    hidden: false,
    disabled: false,
    isConnected: true,
    value: "",
    checked: false,
    href: id === "register-link" ? "/register" : "",
    textContent: "",
    dataset: {} as Record<string, string>,
    listeners,
    focus() {},
    scrollIntoView() {},
    closest: (): null => null,
    addEventListener(type: string, fn: (e: unknown) => unknown) {
      listeners[type] = fn;
    },
  };
}

/** Elements by id, made on first use. */
function fakeDom() {
  const elements = new Map<string, ReturnType<typeof fakeElement>>();
  return (id: string) => {
    if (!elements.has(id)) elements.set(id, fakeElement(id));
    return elements.get(id)!;
  };
}

const scriptSource = (name: string) => readFileSync(new URL(`../../../src/pages/assets/${name}`, import.meta.url), "utf8");
const tick = () => new Promise((r) => setTimeout(r, 0));

/**
 * Runs the sign-in page's script (keyward.js) on /login with `search`, answers the password sign-in
 * with success, and reports where the script sent the browser.
 */
async function runLoginScript(search: string, submit = true) {
  const byId = fakeDom();
  const assigned: string[] = [];
  runInNewContext(scriptSource("keyward.js"), {
    document: { getElementById: byId, querySelectorAll: () => [] },
    location: { search, pathname: "/login", assign: (u: string) => assigned.push(String(u)), reload() {} },
    URLSearchParams,
    fetch: async () => ({ ok: true, status: 200, json: async () => ({ success: true, data: {} }) }),
  });
  if (submit) {
    await byId("login-form").listeners.submit!({ preventDefault() {} });
    await tick();
  }
  return { assigned, registerHref: byId("register-link").href, alert: byId("alert").textContent };
}
