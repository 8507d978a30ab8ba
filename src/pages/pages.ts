import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Router, type Request, type Response } from "express";
import type { Container } from "../container.js";
import { resolvePageContext } from "../http/context.js";
import { ssoLinkBindingOf } from "../http/session.js";
import type { PendingLinkView } from "../modules/sso/index.js";
import { projectPath } from "../infra/paths.js";
import { isAppError } from "../lib/errors.js";
import { registerFlowPages } from "./flows.js";
import { registerSsoPages } from "./sso.js";
import { createWebApp } from "./web-app.js";
import { escapeHtml, layout, pageCsp } from "./layout.js";

const escape = escapeHtml;

function page(res: Response, brand: string, title: string, body: string): void {
  res.setHeader("Content-Security-Policy", pageCsp());
  res.setHeader("Cache-Control", "no-store");
  res.type("html").send(layout(brand, title, body));
}

/** One button per active external provider; keyward.js starts the flow. */
const providerButtons = (providers: Array<{ id: string; name: string }>, verb: string) =>
  providers.map((p) => `<button type="button" class="secondary" data-provider="${escape(p.id)}">${escape(verb)} ${escape(p.name)}</button>`).join("\n  ");

/**
 * An SSO sign-in found this browser's person's existing account unlinked (issue 35): they confirm
 * with their current method. `undefined`: no pending link asked for; null: asked, not held here.
 */
const PENDING_LINK = (id: string, link: PendingLinkView | null | undefined) => {
  if (link === undefined) return "";
  if (link === null)
    return `
<section id="sso-link-expired" class="card" aria-labelledby="sso-link-expired-title">
  <h2 id="sso-link-expired-title">Linking is no longer possible from here</h2>
  <p>This confirmation has expired, was already used or was started in another browser. Sign in through your identity provider again.</p>
</section>`;
  const how = link.byEmail
    ? `<p>Your account has no password or passkey, so we confirm by email: we send a one-time link to <strong>${escape(link.email)}</strong>. Open it in this browser.</p>
  <button id="sso-link-mail" type="button">Email me a link</button>
  <p id="sso-link-mail-sent" class="alert success" hidden tabindex="-1"></p>`
    : `<p>Sign in below with your password or passkey as <strong>${escape(link.email)}</strong>. Your account is then linked and you are signed in through ${escape(link.connectionName)}.</p>`;
  return `
<section id="sso-link" class="card" aria-labelledby="sso-link-title" data-sso-link="${escape(id)}" data-email="${escape(link.email)}" data-by-email="${link.byEmail ? "true" : "false"}">
  <h2 id="sso-link-title" tabindex="-1">Confirm it is you to link your account to ${escape(link.connectionName)}</h2>
  <p>An account with this address already exists and is not linked to your organization's identity provider yet. Nothing is linked until you confirm.</p>
  ${how}
</section>`;
};

const LOGIN = (brand: string, providers: Array<{ id: string; name: string }>, pendingLink = "") => `
<h1>Sign in to ${escape(brand)}</h1>${pendingLink}
<section id="password-step">
  <form id="login-form" novalidate data-stage="email">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username webauthn" required aria-describedby="email-hint">
    <p id="email-hint" class="hint">If your organization signs you in through its own identity provider, Continue takes you there.</p>
    <div id="password-fields" hidden>
      <p class="change-email"><button id="change-email" type="button" class="link">Use a different email</button></p>
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required>
      <label class="check"><input id="remember" type="checkbox"> Keep me signed in</label>
    </div>
    <button id="login-submit" type="submit">Continue</button>
  </form>
  <section id="sso-required" class="card" hidden aria-labelledby="sso-required-title">
    <h2 id="sso-required-title" tabindex="-1">Your organization requires single sign-on</h2>
    <p>This address signs in through your organization's identity provider, not with a password or passkey here.</p>
    <a id="sso-required-start" class="button" href="/sso/start">Continue with single sign-on</a>
  </section>
  <p class="muted"><a id="forgot-link" href="/forgot-password">Forgot your password?</a></p>
  <p class="divider">or</p>
  <button id="passkey" type="button" class="secondary">Sign in with a passkey</button>
  ${providerButtons(providers, "Sign in with")}
  <p class="foot">New to ${escape(brand)}? <a id="register-link" href="/register">Create an account</a></p>
</section>
<section id="mfa-step" hidden aria-live="polite">
  <h2>Second step</h2>
  <p class="muted">Confirm it is you.</p>
  <button id="mfa-webauthn" type="button">Use a passkey or security key</button>
  <form id="mfa-code-form" novalidate>
    <label for="mfa-code">Code from your authenticator app, or a backup code</label>
    <input id="mfa-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code">
    <button type="submit">Verify</button>
  </form>
</section>
<p id="alert" role="alert"></p>`;

/** The command-line client's sign-in, confirmed by a signed-in user (target: where the CLI listens). */
const CLI_AUTHORIZE = (email: string, target: string | null, cliToken: string, problem: string) =>
  target
    ? `
<h1>Sign in the command-line client?</h1>
<p>The command-line client on this computer asks to sign in as <strong>${escape(email)}</strong>.
It receives a session of its own at <code id="cli-target">${escape(target)}</code>.</p>
<p class="muted">Continue only if you just ran its login command yourself.</p>
<button id="cli-allow" type="button" data-cli-token="${escape(cliToken)}">Allow</button>
<p><a href="/">Cancel</a></p>
<p id="alert" role="alert"></p>`
    : `
<h1>Command-line sign-in</h1>
<p id="alert" role="alert">${escape(problem)}</p>`;

/** Hosted pages for flows that need a browser (sign-in and its second step, the command-line client's sign-in); the web app uses GraphQL. */
export function createPagesRouter(container: Container): Router {
  const { services, config } = container;
  const brand = config.email.brand.name;
  const require = createRequire(import.meta.url);
  const file = (name: string, type = "application/javascript"): [string, string] => [type, readFileSync(projectPath(`src/pages/assets/${name}`), "utf8")];
  const assets: Record<string, [string, string]> = {
    "keyward.js": file("keyward.js"),
    "tokens.css": file("tokens.css", "text/css"),
    // The logo as the browser tab's icon, for the hosted pages and the web app.
    "favicon.svg": file("favicon.svg", "image/svg+xml"),
    "keyward.css": file("keyward.css", "text/css"),
    "auto-submit.js": file("auto-submit.js"),
    "flows.js": file("flows.js"),
    // The sign-in page's passkey helpers. The package's exports hide its UMD bundle: find it next to package.json.
    "webauthn.js": ["application/javascript", readFileSync(join(dirname(require.resolve("@simplewebauthn/browser")), "../dist/bundle/index.umd.min.js"), "utf8")],
  };
  const router = Router();
  router.get("/assets/:name", (req, res, next) => {
    // Own names only: `__proto__` or `constructor` must not reach Object.prototype.
    const name = String(req.params.name);
    const asset = Object.hasOwn(assets, name) ? assets[name] : undefined;
    if (!asset) return next();
    res.setHeader("Cache-Control", "public, max-age=300");
    res.type(asset[0]).send(asset[1]);
  });
  const activeProviders = async () => (await services.oauthProviders.listPublic()).filter((p) => p.isActive);
  router.get("/login", async (req, res) => {
    const id = typeof req.query.sso_link === "string" ? req.query.sso_link.slice(0, 128) : "";
    const link = id ? await services.ssoLinkConfirm.pending(id, ssoLinkBindingOf(req, config)) : undefined;
    // The address holds the pending link's id: no page it links to may learn it from the Referer.
    if (id) res.setHeader("Referrer-Policy", "no-referrer");
    page(res, brand, "Sign in", LOGIN(brand, await activeProviders(), PENDING_LINK(id, link)));
  });
  registerSsoPages(router, container);
  // The web app: its files, its addresses, and `/` for a signed-in person.
  const web = createWebApp(container);
  router.use(web.router);
  registerFlowPages(router, container, web);

  /** Pages behind the session cookie: an anonymous visitor is sent to sign in first. */
  const signedIn = (render: (email: string, req: Request) => string | Promise<string>, title: string) => async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    if (req.ctx?.actor.kind !== "user") return res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
    page(res, brand, title, await render(req.ctx.actor.email, req));
  };
  // The account console and "my network access" are the web app's now (/account/…): older emails
  // link here.
  router.get("/network-access", (_req, res) => res.redirect(301, "/account/networks"));
  router.get(
    "/cli/authorize",
    signedIn(async (email, req) => {
      const cliToken = typeof req.query.cli_token === "string" ? req.query.cli_token : "";
      try {
        const found = await services.cliLogin.redirectUrl(req.ctx!, { token: cliToken });
        return CLI_AUTHORIZE(email, found.redirectUrl, cliToken, "");
      } catch (e) {
        // Unknown or expired, or the store is down: the page says which, in the service's words.
        return CLI_AUTHORIZE(email, null, cliToken, isAppError(e) ? e.message : "Command-line sign-in is unavailable right now.");
      }
    }, "Command-line sign-in"),
  );
  return router;
}

