import type { Request, Response, Router } from "express";
import type { Container } from "../container.js";
import { resolvePageContext } from "../http/context.js";
import type { WebApp } from "./web-app.js";
import { isAppError } from "../lib/errors.js";
import { anonymousContext, type RequestContext } from "../lib/request-context.js";
import { escapeHtml as escape, layout, pageCsp } from "./layout.js";

/**
 * The pages every emailed link and first visit lands on: home, register, verify email, forgot and
 * reset password, account activation, invitation. The forms call the public REST API from
 * /assets/flows.js; a GET never spends a link (a mail scanner that follows it changes nothing).
 */

function send(res: Response, brand: string, title: string, body: string, status = 200): void {
  res.status(status);
  res.setHeader("Content-Security-Policy", pageCsp());
  res.setHeader("Cache-Control", "no-store");
  // The URL carries a single-use secret: no page it links to may learn it from the Referer.
  res.setHeader("Referrer-Policy", "no-referrer");
  res.type("html").send(layout(brand, title, body, ["flows.js"]));
}

/** One query value as a string; a repeated or missing parameter counts as absent. */
const queryValue = (req: Request, name: string): string => {
  const v = req.query[name];
  return typeof v === "string" ? v.slice(0, 512) : "";
};

/** A same-site path to come back to (the rule /login applies): one "/", never "//" or a backslash. */
export const safeNext = (v: string): string | null => (/^\/(?!\/)[^\s\\]*$/.test(v) ? v : null);
const withNext = (path: string, next: string | null) => (next ? `${path}?next=${encodeURIComponent(next)}` : path);

const ALERT = `<p id="alert" role="alert"></p>`;
const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escape(value)}">`;

/** A new password, twice; the hint is what the password policy checks. */
const NEW_PASSWORD = (label = "Password") => `
  <label for="password">${label}</label>
  <input id="password" name="password" type="password" autocomplete="new-password" required aria-describedby="password-hint">
  <span id="password-hint" class="hint">At least 8 characters; a few words you will remember work well.</span>
  <label for="password-confirm">Repeat the password</label>
  <input id="password-confirm" name="password_confirm" type="password" autocomplete="new-password" required>`;

const FULL_NAME = `
  <label for="full-name">Your name <span class="hint">Optional</span></label>
  <input id="full-name" name="full_name" type="text" autocomplete="name" maxlength="255">`;

/** A result shown in place of the form: focused when it appears, so a screen reader reads it. */
const DONE = (id: string, title: string, inner: string) => `
<section id="${id}" class="done" hidden tabindex="-1">
  <h2>${title}</h2>
  ${inner}
</section>`;

/** A visitor's home (a signed-in person gets the web app's). */
const HOME = (brand: string) => `
<h1>Welcome to ${escape(brand)}</h1>
<p class="lead">One sign-in for your team: accounts and organizations, passkeys and two-step verification, OpenID Connect for your apps, and short-lived SSH certificates.</p>
<div class="actions"><a id="go-login" class="button" href="/login">Sign in</a><a id="go-register" class="button secondary" href="/register">Create an account</a></div>
<h2>For developers</h2>
<ul class="links" id="api-links">
  <li><a href="/api/v1/openapi.json">REST API</a> <span class="muted">— the OpenAPI 3.1 document of everything under <code>/api/v1</code></span></li>
  <li><a href="/graphql">GraphQL API</a> <span class="muted">— POST queries to <code>/graphql</code>; administrators get the GraphiQL explorer there</span></li>
  <li><a href="/.well-known/openid-configuration">OpenID Connect discovery</a> <span class="muted">— for apps that sign people in with ${escape(brand)}</span></li>
</ul>`;

const REGISTER = (brand: string, next: string | null) => `
<h1>Create your ${escape(brand)} account</h1>
<form id="register-form" data-api="/auth/register" data-done="register-done" novalidate>
  ${FULL_NAME}
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="email" required>
  ${NEW_PASSWORD()}
  <button type="submit">Create account</button>
  <p class="foot muted">Already have an account? <a href="${escape(withNext("/login", next))}">Sign in</a></p>
</form>
${DONE("register-done", "Check your email", `<p class="alert success" data-message></p>
  <p class="muted">Open the link in the email to confirm your address. No email? Check your spam folder, or <a href="/verify-email">send a new link</a>.</p>
  <a id="register-sign-in" class="button secondary" href="${escape(withNext("/login", next))}">Sign in</a>`)}
${ALERT}`;

/** Asks for an address and always answers the same (no account enumeration). */
const RESEND_VERIFICATION = `
<form id="resend-form" data-api="/auth/resend-verification" data-done="resend-done" novalidate>
  <label for="resend-email">Your email address</label>
  <input id="resend-email" name="email" type="email" autocomplete="email" required>
  <button type="submit" class="secondary">Send a new link</button>
</form>
${DONE("resend-done", "Check your email", `<p class="alert success" data-message></p>`)}`;

const VERIFY = (token: string) =>
  token
    ? `
<h1>Confirm your email address</h1>
<form id="verify-form" data-api="/auth/verify-email" data-done="verify-done" data-invalid="verify-invalid" novalidate>
  <p>Press the button to confirm that this address is yours.</p>
  ${hidden("token", token)}
  <button id="confirm-email" type="submit">Confirm my email</button>
</form>
${DONE("verify-done", "Email address confirmed", `<p class="alert success">Your email address is verified.</p>
  <a id="verified-continue" class="button" href="/">Continue</a>`)}
<section id="verify-invalid" hidden tabindex="-1">
  <p class="muted">This link is invalid, has expired or was already used. Enter your address to get a new one.</p>
  ${RESEND_VERIFICATION}
</section>
${ALERT}`
    : `
<h1>Get a new verification link</h1>
${RESEND_VERIFICATION}
${ALERT}`;

const FORGOT = `
<h1>Reset your password</h1>
<form id="forgot-form" data-api="/auth/forgot-password" data-done="forgot-done" novalidate>
  <p class="muted">Enter the address you sign in with. We will email you a link to choose a new password.</p>
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="email" required>
  <button type="submit">Email me a link</button>
</form>
${DONE("forgot-done", "Check your email", `<p class="alert success" data-message></p>
  <p class="muted">The link works once and expires soon. No email? Check your spam folder or try again.</p>`)}
<p class="foot muted"><a href="/login">Back to sign in</a></p>
${ALERT}`;

const NEW_LINK = (id: string, text: string, href: string, label: string) => `
<section id="${id}" hidden tabindex="-1">
  <p class="muted">${text}</p>
  <a class="button secondary" href="${href}">${label}</a>
</section>`;

const RESET = (token: string) =>
  token
    ? `
<h1>Choose a new password</h1>
<form id="reset-form" data-api="/auth/reset-password" data-done="reset-done" data-invalid="reset-invalid" novalidate>
  ${hidden("token", token)}
  ${NEW_PASSWORD("New password")}
  <button type="submit">Set new password</button>
</form>
${DONE("reset-done", "Password changed", `<p class="alert success" data-message></p>
  <a id="reset-sign-in" class="button" href="/login">Sign in</a>`)}
${NEW_LINK("reset-invalid", "This link is invalid, has expired or was already used.", "/forgot-password", "Request a new link")}
${ALERT}`
    : `
<h1>Choose a new password</h1>
<p class="alert">This link is incomplete. Request a new one and open it from the email.</p>
<a class="button secondary" href="/forgot-password">Request a new link</a>`;

type InviteLookup = { email: string; organization: { id: string; name: string }; role: string; userExists: boolean; managed: boolean };

const ROLE_WORDS: Record<string, string> = { owner: "an owner", admin: "an administrator", member: "a member", guest: "a guest" };
// Own keys only: a role named `constructor` must not turn into a function (and a 500).
const role = (r: string) => (Object.hasOwn(ROLE_WORDS, r) ? ROLE_WORDS[r]! : r);

const MANAGED = (org: string) =>
  `<p class="muted" id="managed-notice">Your account will be managed by <strong>${escape(org)}</strong>: while you are a member, its owners and admins can reset your password, remove your second factors, and suspend or delete the account.</p>`;

const ACTIVATE = (code: string, invite: InviteLookup | null) =>
  code
    ? `
<h1>Activate your account</h1>
${invite ? `<p>You were invited to join <strong>${escape(invite.organization.name)}</strong> as ${escape(role(invite.role))}, with <strong>${escape(invite.email)}</strong>.</p>` : `<p>Choose the password for your new account.</p>`}
${invite?.managed ? MANAGED(invite.organization.name) : ""}
<form id="activate-form" data-api="/auth/activate" data-done="activate-done" data-invalid="activate-invalid" novalidate>
  ${hidden("code", code)}
  ${FULL_NAME}
  ${NEW_PASSWORD()}
  <button type="submit">Activate account</button>
</form>
${DONE("activate-done", "Your account is ready", `<p class="alert success" data-message></p>
  <a id="activate-sign-in" class="button" href="/login">Sign in</a>`)}
<section id="activate-invalid" hidden tabindex="-1">
  <p class="muted">This link is invalid, has expired or was already used. Enter your address to get a new one.</p>
  <form id="resend-activation-form" data-api="/auth/resend-activation" data-done="resend-activation-done" novalidate>
    <label for="resend-email">Your email address</label>
    <input id="resend-email" name="email" type="email" autocomplete="email" required>
    <button type="submit" class="secondary">Send a new link</button>
  </form>
  ${DONE("resend-activation-done", "Check your email", `<p class="alert success" data-message></p>`)}
</section>
${ALERT}`
    : `
<h1>Activate your account</h1>
<p class="alert">This link is incomplete. Open it again from the email, or ask your administrator for a new one.</p>`;

/** The invitation as its link shows it, and what the visitor can do: accept, sign in, or create the account. */
const INVITE = (token: string, inv: InviteLookup, actor: RequestContext["actor"]) => {
  const here = `/invite?token=${encodeURIComponent(token)}`;
  const api = `/invites/${encodeURIComponent(token)}/accept`;
  const joined = DONE("invite-done", `You joined ${escape(inv.organization.name)}`, `<p class="alert success">You are now ${escape(role(inv.role))} of <strong>${escape(inv.organization.name)}</strong>.</p>
  <a id="invite-continue" class="button" href="/">Continue</a>`);
  let action: string;
  if (actor.kind === "user" && actor.email === inv.email) {
    action = `<form id="accept-form" data-api="${escape(api)}" data-done="invite-done" novalidate>
  <p>Signed in as <strong>${escape(actor.email)}</strong>.</p>
  <button id="accept-invite" type="submit">Accept invitation</button>
</form>`;
  } else if (actor.kind === "user") {
    action = `<div id="wrong-account">
  <p class="alert">You are signed in as <strong>${escape(actor.email)}</strong>. Sign out, then sign in or create an account with <strong>${escape(inv.email)}</strong> to accept.</p>
  <button id="flow-sign-out" type="button" class="secondary">Sign out</button>
</div>`;
  } else if (inv.userExists) {
    action = `<div id="sign-in-first">
  <p>Sign in with <strong>${escape(inv.email)}</strong> to accept. You will come back here.</p>
  <a id="invite-sign-in" class="button" href="${escape(withNext("/login", here))}">Sign in to accept</a>
</div>`;
  } else {
    action = `<form id="invite-register-form" data-api="${escape(api)}" data-done="invite-done" novalidate>
  <h2>Create your account to join</h2>
  <p class="muted">Your account will use <strong>${escape(inv.email)}</strong>; the invitation proves the address.</p>
  ${FULL_NAME}
  ${NEW_PASSWORD()}
  <button id="invite-register" type="submit">Create account and join</button>
  <p class="foot muted">Already have an account with this address? <a id="invite-sign-in" href="${escape(withNext("/login", here))}">Sign in</a></p>
</form>`;
  }
  return `
<h1>Join ${escape(inv.organization.name)}</h1>
<dl class="facts" id="invite-facts">
  <dt>Organization</dt><dd id="invite-org">${escape(inv.organization.name)}</dd>
  <dt>Role</dt><dd id="invite-role">${escape(inv.role)}</dd>
  <dt>Sent to</dt><dd id="invite-email">${escape(inv.email)}</dd>
</dl>
${inv.managed ? MANAGED(inv.organization.name) : ""}
${action}
${joined}
${ALERT}`;
};

const INVITE_UNUSABLE = (message: string) => `
<h1>Invitation unavailable</h1>
<p class="alert" id="invite-error">${escape(message)}</p>
<p class="foot muted"><a href="/">Home</a></p>`;

/** Registers the pages on the hosted-pages router (mounted at the root, beside /login). */
export function registerFlowPages(router: Router, container: Container, web: WebApp): void {
  const { services, config } = container;
  const brand = config.email.brand.name;
  /** The caller if the request carries a valid session; anonymous otherwise (these pages are public). */
  const caller = async (req: Request): Promise<RequestContext> => {
    await resolvePageContext(services.actors, req);
    return req.ctx ?? anonymousContext(req.requestId, req.ip ?? null, req.get("user-agent") ?? null);
  };
  const lookupInvite = async (ctx: RequestContext, token: string): Promise<InviteLookup | string> =>
    services.invites.lookup(ctx, token).catch((e: unknown) => (isAppError(e) ? e.message : Promise.reject(e)));

  // A signed-in person's home is the web app's; a visitor's says what Keyward is and how to start.
  router.get("/", async (req, res) => {
    const { actor } = await caller(req);
    if (actor.kind === "user") return web.send(res);
    send(res, brand, brand, HOME(brand));
  });
  router.get("/register", (req, res) => send(res, brand, "Create an account", REGISTER(brand, safeNext(queryValue(req, "next")))));
  router.get("/verify-email", (req, res) => send(res, brand, "Confirm your email", VERIFY(queryValue(req, "token"))));
  router.get("/forgot-password", (_req, res) => send(res, brand, "Reset your password", FORGOT));
  router.get("/reset-password", (req, res) => send(res, brand, "Choose a new password", RESET(queryValue(req, "token"))));
  router.get("/activate", async (req, res) => {
    const code = queryValue(req, "code");
    // An organization's "add member" link is an invitation too: say who asked. Other codes stay generic.
    const found = code ? await lookupInvite(await caller(req), code) : null;
    send(res, brand, "Activate your account", ACTIVATE(code, typeof found === "object" ? found : null));
  });
  router.get("/invite", async (req, res) => {
    const token = queryValue(req, "token");
    const ctx = await caller(req);
    const found = token ? await lookupInvite(ctx, token) : "This invitation link is incomplete. Open it again from the email.";
    if (typeof found === "string") return send(res, brand, "Invitation", INVITE_UNUSABLE(found), 404);
    send(res, brand, `Join ${found.organization.name}`, INVITE(token, found, ctx.actor));
  });
}
