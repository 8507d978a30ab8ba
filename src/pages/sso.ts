import express, { type Request, type Response, type Router } from "express";
import type { Container } from "../container.js";
import { resolvePageContext } from "../http/context.js";
import { samlBindingOf, setSamlBindingCookie, setSessionCookie, setSsoBindingCookie, ssoBindingOf } from "../http/session.js";
import { isAppError } from "../lib/errors.js";
import type { SsoFlowStarted } from "../modules/sso/index.js";
import { escapeHtml, layout, pageCsp } from "./layout.js";

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
  router.get("/sso/start", async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    const email = typeof req.query.email === "string" ? req.query.email : undefined;
    go(res, await services.ssoSignIn.startByEmail(req.ctx!, { email }, ssoBindingOf(req, config)));
  });
  router.get("/sso/start/:connectionId", async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    go(res, await services.ssoSignIn.startByConnection(req.ctx!, String(req.params.connectionId), ssoBindingOf(req, config)));
  });
  router.get("/sso/oidc/callback", async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    const q = req.query;
    const str = (v: unknown) => (typeof v === "string" ? v : undefined);
    const outcome = await services.ssoSignIn.complete(
      req.ctx!,
      { code: str(q.code), state: str(q.state), iss: str(q.iss), error: str(q.error), errorDescription: str(q.error_description) },
      ssoBindingOf(req, config),
    );
    if (outcome.session) setSessionCookie(res, config, outcome.session.token, null);
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
    if (outcome.session) setSessionCookie(res, config, outcome.session.token, null);
    res.setHeader("Cache-Control", "no-store");
    res.redirect(303, outcome.redirectTo);
  });
  router.get("/sso/saml/:connectionId/slo", async (req: Request, res: Response) => {
    await resolvePageContext(services.actors, req);
    const raw = req.originalUrl.includes("?") ? req.originalUrl.slice(req.originalUrl.indexOf("?") + 1) : "";
    const { redirectTo } = await services.samlSignIn.slo(req.ctx!, String(req.params.connectionId), raw);
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
