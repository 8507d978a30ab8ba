import type { Request, Response, Router } from "express";
import type { Container, Services } from "../container.js";
import { resolvePageContext } from "../http/context.js";
import type { RequestContext } from "../lib/request-context.js";
import { escapeHtml, layout, pageCsp } from "./layout.js";
import { SECTIONS, type ConsoleData } from "./account-sections.js";

const escape = escapeHtml;

/** Everything the console shows, read through the same services as the API, as the signed-in user. */
async function loadConsole(s: Services, ctx: RequestContext): Promise<ConsoleData> {
  const [me, mfa, passkeys, sessions, linked, providers, orgs, invites, keys, certs, consents, compliance] = await Promise.all([
    s.users.getMe(ctx),
    s.mfa.status(ctx),
    s.mfa.listCredentials(ctx),
    s.mySessions.list(ctx),
    s.linkedAccounts.listMine(ctx),
    s.oauthProviders.listPublic(),
    s.orgs.listMine(ctx),
    s.invites.listMine(ctx),
    s.sshKeys.list(ctx),
    s.certificates.listMine(ctx, { perPage: 10 }),
    s.oidcClients.myConsents(ctx),
    s.mfaPolicy.myCompliance(ctx),
  ]);
  return {
    me,
    mfa,
    passkeys,
    sessions,
    linked,
    providers: providers.filter((p) => p.isActive),
    orgs,
    invites,
    keys,
    certs: certs.items,
    consents,
    compliance,
  };
}

const NAV = () => `
<nav class="console-nav" aria-label="Account sections">
  <ul>
    ${SECTIONS.map((s) => `<li><a href="#${s.id}">${escape(s.title)}</a></li>`).join("\n    ")}
    <li><a href="/network-access">My network access</a></li>
  </ul>
</nav>`;

/**
 * The page: a header (who is signed in, sign out), a nav to every section, the sections, and one
 * message area that announces the outcome of each action (role=status for success, role=alert
 * for errors). The script re-reads this same page to redraw a section after an action, so the
 * server stays the only place that renders it.
 */
export function renderConsole(brand: string, publicUrl: string, data: ConsoleData): string {
  return `
<div class="console">
  <header class="console-head">
    <p class="console-brand">${escape(brand)}</p>
    <h1>Your account</h1>
    <p>Signed in as <strong id="who">${escape(data.me.email)}</strong></p>
    <button id="sign-out" type="button" class="secondary" data-action="sign-out">Sign out</button>
  </header>
  ${NAV()}
  <div class="console-body">
    ${SECTIONS.map((s) => s.render(data, { publicUrl })).join("\n")}
  </div>
  <div class="console-messages">
    <p id="status" role="status" aria-live="polite"></p>
    <p id="alert" role="alert"></p>
  </div>
</div>
<script src="/assets/webauthn.js" defer></script>
<script src="/assets/account.js" defer></script>
<script src="/assets/account-two-step.js" defer></script>`;
}

/**
 * The account console at /account (and /account/security, kept for links in older emails: the
 * same page, opened at its two-step verification section). Anonymous visitors sign in first.
 */
export function mountAccountConsole(router: Router, container: Container): void {
  const { services, config } = container;
  const brand = config.email.brand.name;
  const show = async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    if (req.ctx?.actor.kind !== "user") return res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
    const data = await loadConsole(services, req.ctx);
    res.setHeader("Content-Security-Policy", pageCsp());
    res.setHeader("Cache-Control", "no-store");
    // The page's own scripts come after the sections: the shared layout adds none.
    res.type("html").send(layout(brand, "Your account", renderConsole(brand, config.http.publicUrl, data), false));
  };
  router.get("/account", show);
  router.get("/account/security", show);
}
