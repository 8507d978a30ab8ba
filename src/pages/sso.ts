import express, { type Request, type Response, type Router } from "express";
import type { Container } from "../container.js";
import { resolvePageContext } from "../http/context.js";
import { samlBindingOf, setSamlBindingCookie, setSessionCookie, setSsoBindingCookie, setSsoLinkBindingCookie, ssoBindingOf } from "../http/session.js";
import { isAppError } from "../lib/errors.js";
import type { SsoCallbackOutcome, SsoFlowStarted } from "../modules/sso/index.js";
import { escapeHtml, layout, pageCsp } from "./layout.js";

/** The page a mailed link-confirmation opens: a GET never spends it (a mail scanner changes nothing). */
const LINK_CONFIRM = (token: string) =>
  token
    ? `
<h1>Link your account to single sign-on</h1>
<form id="sso-link-confirm-form" data-api="/auth/sso/link/email/confirm" data-done="sso-link-confirm-done" novalidate>
  <p>Press the button to link your account to your organization's identity provider and sign in. Open this page in the browser where you signed in through it.</p>
  <input type="hidden" name="token" value="${escapeHtml(token)}">
  <button id="sso-link-confirm" type="submit">Link my account and sign in</button>
</form>
<section id="sso-link-confirm-done" class="done" hidden tabindex="-1">
  <h2>Your account is linked</h2>
  <p class="alert success" data-message></p>
  <a id="sso-link-continue" class="button" href="/" data-continue>Continue</a>
</section>
<p id="alert" role="alert"></p>`
    : `
<h1>Link your account to single sign-on</h1>
<p class="alert">This link is incomplete. Open it again from the email, or sign in through your identity provider again.</p>`;

/**
 * The browser's SSO addresses (issue 35): `/sso/start?email=` (home-realm discovery),
 * `/sso/start/:connectionId`, and `/sso/oidc/callback` (the redirect URI registered at the
 * organization's identity provider). Thin: each calls one service method and redirects.
 */
export function registerSsoPages(router: Router, container: Container): void {
  const { services, config } = container;
  const go = (res: Response, started: SsoFlowStarted) => {
    setSsoBindingCookie(res, config, started.binding, config.externalAuth.flowTtl);
    // The IdP posts the answer cross-site: a SameSite=Lax cookie would not come with it.
    if (started.kind === "saml") setSamlBindingCookie(res, config, started.binding, config.externalAuth.flowTtl);
    res.setHeader("Cache-Control", "no-store");
    if (started.post) return postToIdp(res, config.email.brand.name, started.authorizationUrl, started.post);
    res.redirect(303, started.authorizationUrl);
  };
  // The browser lands here after a callback: a pending link also gets its binding cookie.
  const land = (res: Response, outcome: SsoCallbackOutcome) => {
    if (outcome.session) setSessionCookie(res, config, outcome.session.token, null);
    if (outcome.linkBinding) setSsoLinkBindingCookie(res, config, outcome.linkBinding, services.ssoLinkConsent.ttl);
  };
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  router.get("/sso/start", async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    go(res, await services.ssoSignIn.startByEmail(req.ctx!, { email: str(req.query.email), next: str(req.query.next) }, ssoBindingOf(req, config)));
  });
  router.get("/sso/start/:connectionId", async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    go(res, await services.ssoSignIn.startByConnection(req.ctx!, String(req.params.connectionId), ssoBindingOf(req, config), { next: str(req.query.next) }));
  });
  router.get("/sso/link/confirm", (req: Request, res: Response) => {
    res.setHeader("Content-Security-Policy", pageCsp());
    res.setHeader("Cache-Control", "no-store");
    // The URL carries a single-use secret: no page it links to may learn it from the Referer.
    res.setHeader("Referrer-Policy", "no-referrer");
    res.type("html").send(layout(config.email.brand.name, "Link your account", LINK_CONFIRM((str(req.query.token) ?? "").slice(0, 128)), ["flows.js"]));
  });
  router.get("/sso/oidc/callback", async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    const q = req.query;
    const outcome = await services.ssoSignIn.complete(
      req.ctx!,
      { code: str(q.code), state: str(q.state), iss: str(q.iss), error: str(q.error), errorDescription: str(q.error_description) },
      ssoBindingOf(req, config),
    );
    land(res, outcome);
    // The URL held a code: keep it out of caches and of the next page's Referer.
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("Referrer-Policy", "no-referrer");
    res.redirect(303, outcome.redirectTo);
  });
  // SAML (issue 35): the SP metadata an admin gives the IdP, the ACS the IdP posts to, and single logout.
  router.get("/sso/saml/:connectionId/metadata", async (req: Request, res: Response) => {
    const xml = await services.samlSignIn.metadata(String(req.params.connectionId));
    res.setHeader("Content-Type", "application/samlmetadata+xml; charset=utf-8");
    res.setHeader("Cache-Control", "no-cache");
    res.send(xml);
  });
  router.post("/sso/saml/:connectionId/acs", express.urlencoded({ extended: false, limit: "1mb" }), async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const outcome = await services.samlSignIn.acs(req.ctx!, String(req.params.connectionId), { SAMLResponse: body.SAMLResponse, RelayState: body.RelayState }, samlBindingOf(req, config) ?? ssoBindingOf(req, config));
    land(res, outcome);
    res.setHeader("Cache-Control", "no-store");
    res.redirect(303, outcome.redirectTo);
  });
  router.get("/sso/saml/:connectionId/slo", async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    const raw = req.originalUrl.includes("?") ? req.originalUrl.slice(req.originalUrl.indexOf("?") + 1) : "";
    const { redirectTo } = await services.samlLogout.slo(req.ctx!, String(req.params.connectionId), raw);
    res.setHeader("Cache-Control", "no-store");
    res.redirect(303, redirectTo);
  });
  // OpenID Connect Back-Channel Logout 1.0 §2.5: the provider posts a logout token, server to server.
  router.post("/sso/oidc/:connectionId/backchannel-logout", express.urlencoded({ extended: false, limit: "64kb" }), async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    res.setHeader("Cache-Control", "no-store");
    try {
      const body = (req.body ?? {}) as Record<string, unknown>;
      await services.ssoLogout.backchannelLogout(req.ctx!, String(req.params.connectionId), { logout_token: body.logout_token });
      res.status(200).end();
    } catch (e) {
      if (!isAppError(e) || e.status >= 500) throw e;
      const reason = (e.details as { reason?: unknown } | undefined)?.reason;
      res.status(400).json({ error: "invalid_request", error_description: typeof reason === "string" ? reason : e.message });
    }
  });
}

/**
 * The HTTP-POST binding (SAML bindings §3.5): a form that posts the AuthnRequest to the IdP by
 * itself (an external script, as the CSP allows no inline one; the button is for browsers without
 * JavaScript). The CSP lets this one form post to the IdP's origin.
 */
function postToIdp(res: Response, brand: string, action: string, fields: { SAMLRequest: string; RelayState: string }): void {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}"/>`)
    .join("");
  res.setHeader("Content-Security-Policy", pageCsp([new URL(action).origin]));
  res.type("html").send(
    layout(
      brand,
      "Signing in",
      `<h1>Continuing to your organization's sign-in</h1>
<form method="post" action="${escapeHtml(action)}" data-auto-submit>${inputs}<button type="submit">Continue</button></form>`,
      ["auto-submit.js"],
    ),
  );
}
