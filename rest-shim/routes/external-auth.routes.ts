import type { Request, Response } from "express";
import type { Config } from "../../src/config/index.js";
import type { Services } from "../../src/container.js";
import { oauthBindingOf, setMfaCookie, setOAuthBindingCookie, setSessionCookie } from "../../src/http/session.js";
import { authorizeQuerySchema, callbackQuerySchema, providerConfigSchema, type FlowStarted } from "../../src/modules/external-auth/index.js";
import { sendData } from "../envelope.js";
import { input, param, queryInput, type RouteDef } from "../route.js";
import { onAnotherAccount } from "./admin.routes.js";

const X = "/auth/external";
const linkBodySchema = authorizeQuerySchema.pick({ next: true });
const modeQuerySchema = authorizeQuerySchema.pick({ mode: true });

/**
 * The flow's browser binding goes in a cookie. The body has what the client needs to redirect, or,
 * with `mode=redirect` (a top-level navigation, e.g. from a web app on another site, whose fetch
 * could not set the cookie), the browser goes straight to the provider.
 */
function sendFlow(req: Request, res: Response, config: Config, started: FlowStarted): void {
  setOAuthBindingCookie(res, config, started.binding, config.externalAuth.flowTtl);
  if (req.query.mode === "redirect") return res.redirect(303, started.authorizationUrl);
  sendData(res, 200, "Redirect the browser to authorization_url", { authorizationUrl: started.authorizationUrl, state: started.state });
}

/** Sign in with GitHub and Google: flows, linked accounts, and provider configuration. */
export const externalAuthRoutes = (s: Services, config: Config): RouteDef[] => [
  {
    method: "get", path: `${X}/providers`, tag: "external-auth", auth: "none", summary: "The external identity providers and whether each can be used",
    handle: async (_req, res) => sendData(res, 200, "Providers", { providers: await s.oauthProviders.listPublic() }),
  },
  {
    method: "get", path: `${X}/:provider/authorize`, tag: "external-auth", auth: "optional", query: authorizeQuerySchema,
    redirect: { status: 303, description: "With mode=redirect: the browser goes straight to the provider" },
    summary: "Start a login, register or link flow (?flow=&next=&mode=redirect); redirect_uri is refused: the callback is fixed by configuration",
    handle: async (req, res) => sendFlow(req, res, config, await s.externalAuth.start(req.ctx, param(req, "provider"), queryInput(req), oauthBindingOf(req, config))),
  },
  {
    method: "get", path: `${X}/:provider/callback`, tag: "external-auth", auth: "none", query: callbackQuerySchema,
    redirect: { status: 303, only: true, description: "Onwards to the page the flow asked for, with a session, a pending second factor, or ?error=" },
    summary: "Where the provider returns the browser; redirects onwards with a session, a pending second factor, or an error",
    handle: async (req, res) => {
      const outcome = await s.externalAuth.complete(req.ctx, param(req, "provider"), queryInput(req), oauthBindingOf(req, config));
      if (outcome.session) setSessionCookie(res, config, outcome.session.token, null);
      if (outcome.mfa) setMfaCookie(res, config, outcome.mfa.token, outcome.mfa.expiresAt);
      // The URL held a code: keep it out of caches and of the next page's Referer.
      res.setHeader("Cache-Control", "no-store");
      res.setHeader("Referrer-Policy", "no-referrer");
      res.redirect(303, outcome.redirectTo);
    },
  },
  {
    method: "post", path: `${X}/:provider/link`, tag: "external-auth", auth: "user", body: linkBodySchema, query: modeQuerySchema,
    redirect: { status: 303, description: "With ?mode=redirect: the browser goes straight to the provider" },
    summary: "Start linking a provider to your account (?mode=redirect answers with a redirect instead of JSON)",
    handle: async (req, res) => sendFlow(req, res, config, await s.externalAuth.startLink(req.ctx, param(req, "provider"), input(req), oauthBindingOf(req, config))),
  },
  {
    method: "get", path: `${X}/linked-accounts`, tag: "external-auth", auth: "user", summary: "Your linked external accounts (GitHub, Google) and your SSO identities (sso_identities)",
    handle: async (req, res) => sendData(res, 200, "Linked accounts", await s.linkedAccounts.listMine(req.ctx)),
  },
  {
    method: "delete", path: `${X}/:provider/unlink`, data: null, errors: { 409: "It is your last way to sign in (LAST_SIGN_IN_METHOD)" }, tag: "external-auth", auth: "user", summary: "Unlink a provider (refused if it is your last way to sign in)",
    handle: async (req, res) => {
      await s.linkedAccounts.unlinkMine(req.ctx, param(req, "provider"));
      sendData(res, 200, "Account unlinked");
    },
  },
  ...providerConfigRoutes(s, `${X}/providers/:provider/config`, "post"),
  {
    method: "get", path: "/admin/oauth/providers", tag: "superadmin", auth: "superadmin", summary: "Every provider's configuration (never its secret)",
    handle: async (req, res) => sendData(res, 200, "Providers", { providers: await s.oauthProviders.list(req.ctx) }),
  },
  ...providerConfigRoutes(s, "/admin/oauth/providers/:provider", "put"),
  onAnotherAccount({
    method: "get", path: "/admin/users/:userId/linked-accounts", tag: "admin", auth: "user", summary: "The linked accounts of a user you administer",
    handle: async (req, res) => sendData(res, 200, "Linked accounts", { linkedAccounts: await s.linkedAccounts.listForUser(req.ctx, param(req, "userId")) }),
  }),
  onAnotherAccount({
    method: "delete", path: "/admin/users/:userId/linked-accounts/:provider", data: null, tag: "admin", auth: "user", summary: "Unlink a provider from a user you administer",
    handle: async (req, res) => {
      await s.linkedAccounts.unlinkForUser(req.ctx, param(req, "userId"), param(req, "provider"));
      sendData(res, 200, "Account unlinked");
    },
  }),
];

/** Read, create-or-update (201 when new, 200 when updated) and delete one provider's configuration. */
function providerConfigRoutes(s: Services, path: string, write: "post" | "put"): RouteDef[] {
  return [
    {
      method: "get", path, tag: "superadmin", auth: "superadmin", summary: "A provider's configuration (never its secret)",
      handle: async (req, res) => sendData(res, 200, "Provider", { provider: await s.oauthProviders.get(req.ctx, param(req, "provider")) }),
    },
    {
      method: write, path, tag: "superadmin", auth: "superadmin", body: providerConfigSchema, alsoStatus: [201],
      summary: "Configure a provider: client_id, client_secret (sealed at rest; optional on update), scopes, is_enabled",
      handle: async (req, res) => {
        const { config, created } = await s.oauthProviders.configure(req.ctx, param(req, "provider"), input(req));
        sendData(res, created ? 201 : 200, created ? "Provider configured" : "Provider updated", { provider: config });
      },
    },
    {
      method: "delete", path, data: null, errors: { 400: "Nothing is stored for this provider (PROVIDER_NOT_CONFIGURED)" }, tag: "superadmin", auth: "superadmin", summary: "Remove a provider's stored configuration (environment variables apply again)",
      handle: async (req, res) => {
        await s.oauthProviders.remove(req.ctx, param(req, "provider"));
        sendData(res, 200, "Provider configuration removed");
      },
    },
  ];
}
