import type { Services } from "../../src/container.js";
import { createApiKeySchema, revokeApiKeySchema, updateApiKeySchema } from "../../src/modules/api-keys/index.js";
import { sendData, sendList } from "../envelope.js";
import { input, param, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

const K = "/organizations/:orgId/api-keys";

export const apiKeysRoutes = (s: Services): RouteDef[] => [
  {
    method: "get", path: K, data: data.apiKeys, tag: "api-keys", auth: "user", org: "admin", summary: "API keys (never their secrets)",
    handle: async (req, res) => sendList(res, 200, "API keys", "apiKeys", await s.apiKeys.list(req.ctx, param(req, "orgId"))),
  },
  {
    method: "post", path: K, data: data.createdApiKey, tag: "api-keys", auth: "user", org: "admin", body: createApiKeySchema, status: 201, summary: "Create an API key: the secret is in the answer, once",
    handle: async (req, res) => sendData(res, 201, "API key created: store it now, it is not shown again", { apiKey: await s.apiKeys.create(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "patch", path: `${K}/:keyId`, data: data.apiKey, tag: "api-keys", auth: "user", org: "admin", body: updateApiKeySchema, summary: "Rename an API key or change its description",
    handle: async (req, res) => sendData(res, 200, "API key updated", { apiKey: await s.apiKeys.update(req.ctx, param(req, "orgId"), param(req, "keyId"), input(req)) }),
  },
  {
    method: "post", path: `${K}/:keyId/revoke`, errors: { 409: "Already revoked (ALREADY_REVOKED)" }, data: data.apiKey, tag: "api-keys", auth: "user", org: "admin", body: revokeApiKeySchema, summary: "Revoke an API key (it stops working at once)",
    handle: async (req, res) => sendData(res, 200, "API key revoked", { apiKey: await s.apiKeys.revoke(req.ctx, param(req, "orgId"), param(req, "keyId"), input(req)) }),
  },
  {
    method: "delete", path: `${K}/:keyId`, errors: { 409: "Already revoked (ALREADY_REVOKED)" }, data: data.apiKey, tag: "api-keys", auth: "user", org: "admin", summary: "Revoke an API key",
    handle: async (req, res) => sendData(res, 200, "API key revoked", { apiKey: await s.apiKeys.revoke(req.ctx, param(req, "orgId"), param(req, "keyId"), {}) }),
  },
];
