import type { Services } from "../../src/container.js";
import { createClientSchema, createRegistrationTokenSchema, updateClientSchema, configureClientSchema } from "../../src/modules/oidc-clients/index.js";
import { sendData, sendList } from "../envelope.js";
import { input, param, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

const C = "/organizations/:orgId/clients";
const A = "/admin/oidc-clients";
const R = "/organizations/:orgId/registration-tokens";

export const oidcClientsRoutes = (s: Services): RouteDef[] => [
  {
    method: "get", path: C, data: data.clients, tag: "oidc", auth: "user", org: "admin", summary: "The organization's OpenID Connect clients (never their secrets)",
    handle: async (req, res) => sendList(res, 200, "Clients", "clients", await s.oidcClients.list(req.ctx, param(req, "orgId"))),
  },
  {
    method: "post", path: C, data: data.createdClient, tag: "oidc", auth: "user", org: "admin", body: createClientSchema, status: 201,
    summary: "Register a client; a confidential client's secret is in the answer, once",
    handle: async (req, res) => sendData(res, 201, "Client registered", { client: await s.oidcClients.create(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "get", path: `${C}/:clientId`, data: data.client, tag: "oidc", auth: "user", org: "admin", summary: "One client",
    handle: async (req, res) => sendData(res, 200, "Client", { client: await s.oidcClients.get(req.ctx, param(req, "orgId"), param(req, "clientId")) }),
  },
  {
    method: "patch", path: `${C}/:clientId`, data: data.client, tag: "oidc", auth: "user", org: "admin", body: updateClientSchema,
    summary: "Change a client's name, redirect URIs, grant types, CORS origins or token lifetimes",
    handle: async (req, res) => sendData(res, 200, "Client updated", { client: await s.oidcClients.update(req.ctx, param(req, "orgId"), param(req, "clientId"), input(req)) }),
  },
  {
    method: "post", path: `${C}/:clientId/rotate-secret`, errors: { 400: "A public client has no secret (BAD_REQUEST)" }, data: data.rotatedClient, tag: "oidc", auth: "user", org: "admin",
    summary: "Replace a confidential client's secret (shown once; the old one stops working)",
    handle: async (req, res) => sendData(res, 200, "Client secret rotated: store it now, it is not shown again", { client: await s.oidcClients.rotateSecret(req.ctx, param(req, "orgId"), param(req, "clientId")) }),
  },
  {
    method: "delete", path: `${C}/:clientId`, data: null, tag: "oidc", auth: "user", org: "admin", summary: "Delete a client and every token issued to it",
    handle: async (req, res) => {
      await s.oidcClients.delete(req.ctx, param(req, "orgId"), param(req, "clientId"));
      sendData(res, 200, "Client deleted");
    },
  },
  {
    method: "get", path: R, data: data.registrationTokens, tag: "oidc", auth: "user", org: "admin",
    summary: "The organization's initial access tokens for Dynamic Client Registration, revoked ones included (never the tokens themselves); superadmins may list any organization's",
    handle: async (req, res) => sendList(res, 200, "Registration tokens", "registration_tokens", await s.oidcRegistration.listTokens(req.ctx, param(req, "orgId"))),
  },
  {
    method: "post", path: R, data: data.createdRegistrationToken, tag: "oidc", auth: "user", org: "admin", body: createRegistrationTokenSchema, status: 201,
    errors: { 409: "Dynamic client registration is off on this server (DYNAMIC_REGISTRATION_DISABLED)" },
    summary: "Issue an initial access token (shown once): each client registered with it at /api/v1/oidc/register belongs to this organization; superadmins may issue for any organization",
    handle: async (req, res) => sendData(res, 201, "Registration token issued: store it now, it is not shown again", { registrationToken: await s.oidcRegistration.createToken(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "delete", path: `${R}/:tokenId`, data: data.registrationToken, tag: "oidc", auth: "user", org: "admin", errors: { 409: "Already revoked (ALREADY_REVOKED)" },
    summary: "Revoke an initial access token: it registers nothing more (the clients it registered stay)",
    handle: async (req, res) => sendData(res, 200, "Registration token revoked", { registrationToken: await s.oidcRegistration.revokeToken(req.ctx, param(req, "orgId"), param(req, "tokenId")) }),
  },
  {
    method: "get", path: "/users/me/consents", data: data.consents, tag: "oidc", auth: "user", summary: "Applications you allowed to access your account",
    handle: async (req, res) => sendList(res, 200, "Consents", "consents", await s.oidcClients.myConsents(req.ctx)),
  },
  {
    method: "delete", path: "/users/me/consents/:clientId", data: null, tag: "oidc", auth: "user",
    summary: "Withdraw consent: the application's tokens for you stop working and it must ask again",
    handle: async (req, res) => {
      await s.oidcClients.revokeConsent(req.ctx, param(req, "clientId"));
      sendData(res, 200, "Consent withdrawn");
    },
  },
  {
    method: "get", path: A, data: data.clients, tag: "oidc", auth: "superadmin", summary: "Keyward's built-in clients (the keyward command-line client)",
    handle: async (req, res) => sendList(res, 200, "Built-in clients", "clients", await s.oidcClientAdmin.listBuiltIn(req.ctx)),
  },
  {
    method: "get", path: `${A}/:clientId`, data: data.client, tag: "oidc", auth: "superadmin", summary: "Any client, built-in or registered by an organization",
    handle: async (req, res) => sendData(res, 200, "Client", { client: await s.oidcClientAdmin.get(req.ctx, param(req, "clientId")) }),
  },
  {
    method: "patch", path: `${A}/:clientId`, data: data.client, tag: "oidc", auth: "superadmin", body: configureClientSchema,
    summary: "Set the Keyward API scopes a client may request (allowed_api_scopes; narrowing applies to tokens already issued), or a built-in client's name and token lifetimes",
    handle: async (req, res) => sendData(res, 200, "Client configured", { client: await s.oidcClientAdmin.configure(req.ctx, param(req, "clientId"), input(req)) }),
  },
];
