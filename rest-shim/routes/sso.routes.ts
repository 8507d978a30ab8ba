import type { Config } from "../../src/config/index.js";
import type { Services } from "../../src/container.js";
import { setSamlBindingCookie, setSsoBindingCookie, ssoBindingOf, ssoLinkBindingOf } from "../../src/http/session.js";
import { createOidcConnectionSchema, createSamlConnectionSchema, ssoDiscoverSchema, ssoLinkMailConfirmSchema, ssoLinkMailSchema, updateSsoConnectionSchema } from "../../src/modules/sso/index.js";
import { sendSession } from "../sign-in-answer.js";
import { sendData, sendList } from "../envelope.js";
import { input, param, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

const C = "/organizations/:orgId/sso/connections";

/** An organization's SSO connections (owners, admins, superadmins), and linking one's own account. */
export const ssoRoutes = (s: Services, config: Config): RouteDef[] => [
  {
    method: "get", path: C, data: data.ssoConnections, tag: "sso", auth: "user", org: "admin", summary: "The organization's SSO connections (secrets are never returned)",
    handle: async (req, res) => sendList(res, 200, "SSO connections", "connections", await s.ssoConnections.list(req.ctx, param(req, "orgId"))),
  },
  {
    method: "post", path: `${C}/oidc`, data: data.ssoConnection, tag: "sso", auth: "user", org: "admin", body: createOidcConnectionSchema, status: 201,
    errors: { 400: "The issuer's discovery document could not be used (SSO_DISCOVERY_FAILED) or the input is invalid" },
    summary: "Create an OpenID Connect connection: the issuer's discovery document is read and its issuer must match; client_secret (or private_key for private_key_jwt) is sealed, write-only",
    handle: async (req, res) => sendData(res, 201, "SSO connection created", { connection: await s.ssoConnections.createOidc(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "post", path: `${C}/saml`, data: data.ssoConnection, tag: "sso", auth: "user", org: "admin", body: createSamlConnectionSchema, status: 201,
    errors: { 400: "The IdP's metadata could not be used (SSO_METADATA_INVALID) or the input is invalid" },
    summary: "Create a SAML 2.0 connection: the IdP by metadata URL (re-read periodically), metadata document, or entity id + SSO URL + certificates; Keyward generates the SP signing and encryption keys (sealed, never returned)",
    handle: async (req, res) => sendData(res, 201, "SSO connection created", { connection: await s.ssoConnections.createSaml(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "get", path: `${C}/:connectionId`, data: data.ssoConnection, tag: "sso", auth: "user", org: "admin", summary: "One SSO connection",
    handle: async (req, res) => sendData(res, 200, "SSO connection", { connection: await s.ssoConnections.get(req.ctx, param(req, "orgId"), param(req, "connectionId")) }),
  },
  {
    method: "patch", path: `${C}/:connectionId`, data: data.ssoConnection, tag: "sso", auth: "user", org: "admin", body: updateSsoConnectionSchema,
    summary: "Change an SSO connection (an absent secret keeps the stored one)",
    handle: async (req, res) => sendData(res, 200, "SSO connection updated", { connection: await s.ssoConnections.update(req.ctx, param(req, "orgId"), param(req, "connectionId"), input(req)) }),
  },
  {
    method: "post", path: `${C}/:connectionId/enable`, data: data.ssoConnection, tag: "sso", auth: "user", org: "admin", summary: "Enable an SSO connection",
    handle: async (req, res) => sendData(res, 200, "SSO connection enabled", { connection: await s.ssoConnections.setEnabled(req.ctx, param(req, "orgId"), param(req, "connectionId"), true) }),
  },
  {
    method: "post", path: `${C}/:connectionId/disable`, data: data.ssoConnection, tag: "sso", auth: "user", org: "admin", summary: "Disable an SSO connection",
    handle: async (req, res) => sendData(res, 200, "SSO connection disabled", { connection: await s.ssoConnections.setEnabled(req.ctx, param(req, "orgId"), param(req, "connectionId"), false) }),
  },
  {
    method: "delete", path: `${C}/:connectionId`, data: data.ssoConnection, tag: "sso", auth: "user", org: "admin", summary: "Remove an SSO connection (its people keep their accounts)",
    handle: async (req, res) => sendData(res, 200, "SSO connection removed", { connection: await s.ssoConnections.remove(req.ctx, param(req, "orgId"), param(req, "connectionId")) }),
  },
  {
    method: "get", path: "/sso/connections", data: data.memberSsoConnections, tag: "sso", auth: "user",
    summary: "The enabled SSO connections of your organizations (any role), each with whether your account is linked to it (never their configuration)",
    handle: async (req, res) => sendList(res, 200, "SSO connections", "connections", await s.ssoLinks.listMyConnections(req.ctx)),
  },
  {
    method: "delete", path: "/sso/identities/:identityId", data: null, tag: "sso", auth: "user",
    errors: {
      404: "No such identity of yours (SSO_IDENTITY_NOT_FOUND)",
      409: "Your organization manages your account (SSO_UNLINK_MANAGED), requires SSO for your address (SSO_UNLINK_REQUIRED), or it is your last way to sign in (LAST_SIGN_IN_METHOD)",
    },
    summary: "Unlink one of your SSO identities (listed in /auth/external/linked-accounts as sso_identities)",
    handle: async (req, res) => {
      await s.ssoLinks.unlinkMine(req.ctx, param(req, "identityId"));
      sendData(res, 200, "SSO identity unlinked");
    },
  },
  {
    method: "post", path: "/sso/link/:connectionId", data: data.ssoLinkStart, tag: "sso", auth: "user",
    summary: "Start linking your account to your organization's identity provider: redirect the browser to authorization_url; the callback links it if the provider's address is your account's",
    handle: async (req, res) => {
      const started = await s.ssoSignIn.startLink(req.ctx, param(req, "connectionId"), ssoBindingOf(req, config));
      setSsoBindingCookie(res, config, started.binding, config.externalAuth.flowTtl);
      if (started.kind === "saml") setSamlBindingCookie(res, config, started.binding, config.externalAuth.flowTtl);
      sendData(res, 200, "Redirect the browser to authorization_url", { authorizationUrl: started.authorizationUrl });
    },
  },
  {
    method: "post", path: "/auth/sso/discover", tag: "sso", auth: "none", body: ssoDiscoverSchema,
    summary: "Home-realm discovery without starting a flow: sso true and start_url when the address's domain routes to an enabled connection of the organization that verified it; otherwise the same answer for every address (sso false), whether or not an account exists",
    handle: async (req, res) => sendData(res, 200, "Sign-in route", await s.ssoSignIn.discover(req.ctx, input(req))),
  },
  {
    method: "post", path: "/auth/sso/link/email", tag: "sso", auth: "none", body: ssoLinkMailSchema,
    errors: { 400: "The pending link is unknown, used, expired or another browser's (SSO_LINK_INVALID)", 409: "The account has a password or passkey: confirm with it (SSO_LINK_CONFIRM_WITH_SIGN_IN)" },
    summary: "Email the account a one-time link (15 minutes) that confirms the pending SSO link in this browser: for accounts with neither password nor passkey",
    handle: async (req, res) => sendData(res, 200, "Confirmation link sent", await s.ssoLinkConfirm.mail(req.ctx, input(req), ssoLinkBindingOf(req, config))),
  },
  {
    method: "post", path: "/auth/sso/link/email/confirm", data: data.ssoLinkConfirmed, tag: "sso", auth: "none", body: ssoLinkMailConfirmSchema,
    errors: { 400: "The link is unknown, used, expired or was opened in another browser (SSO_LINK_INVALID)" },
    summary: "Confirm a pending SSO link with the emailed token (in the browser that asked for it): links the account and opens an SSO session; redirect_to is where the browser goes next (the SSO sign-in's next, else /)",
    handle: async (req, res) => {
      const done = await s.ssoLinkConfirm.confirmByMail(req.ctx, input(req), ssoLinkBindingOf(req, config));
      sendSession(res, config, done, "Account linked", { redirectTo: done.redirectTo });
    },
  },
];
