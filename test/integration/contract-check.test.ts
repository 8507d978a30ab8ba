import express from "express";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { sendData, sendError } from "../../rest-shim/envelope.js";
import { errorHandler } from "../../rest-shim/middleware/error-handler.js";
import { buildOpenApi } from "../../rest-shim/openapi.js";
import { mountFallbacks, mountRoutes, type RouteDef } from "../../rest-shim/route.js";
import { requestId } from "../../src/http/request-id.js";
import { jsonBody } from "../../src/http/body.js";
import type { Logger } from "../../src/infra/logger.js";
import { ContractChecker, watchFetches } from "../helpers/contract.js";
import { HttpClient } from "../helpers/http.js";
import { renderContracts } from "../../src/tasks/emit-schema.js";

/**
 * The response-validation layer catches drift: a small router whose routes break their own
 * declarations (an undocumented status, a body of the wrong shape, a redirect without Location),
 * checked through the same HttpClient the integration suite uses.
 */
const thing = z.object({ thing: z.object({ id: z.string(), count: z.number().int(), createdAt: z.date() }) });
const routes: RouteDef[] = [
  {
    method: "get", path: "/things/:id", tag: "t", auth: "none", summary: "Honest", data: thing,
    handle: async (req, res) => sendData(res, 200, "Thing", { thing: { id: String(req.params.id), count: 1, createdAt: new Date() } }),
  },
  {
    method: "get", path: "/teapot", tag: "t", auth: "none", summary: "Answers a status it does not declare",
    handle: async (_req, res) => sendError(res, 418, "TEAPOT", "I am a teapot"),
  },
  {
    method: "get", path: "/shape", tag: "t", auth: "none", summary: "Answers data of the wrong shape", data: thing,
    handle: async (_req, res) => sendData(res, 200, "Thing", { thing: { id: 7, count: "many" } }),
  },
  {
    method: "post", path: "/things", tag: "t", auth: "none", summary: "Declares 201, answers 200", status: 201, body: z.object({ name: z.string() }),
    handle: async (_req, res) => sendData(res, 200, "Created"),
  },
  {
    method: "get", path: "/bare", tag: "t", auth: "none", summary: "Answers no envelope",
    handle: async (_req, res) => void res.status(200).json({ ok: true }),
  },
];

let server: Server;
let http: HttpClient;
let origin: string;
let unwatch: () => void;
beforeAll(async () => {
  const app = express();
  app.use(requestId);
  const router = express.Router();
  router.use(jsonBody("10kb"));
  mountRoutes(router, routes);
  mountFallbacks(router, routes);
  app.use("/api/v1", router);
  app.use(errorHandler({ error: () => undefined } as unknown as Logger));
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const doc = buildOpenApi(routes, { version: "test" });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const checker = new ContractChecker(doc);
  http = new HttpClient(origin, checker);
  unwatch = watchFetches(origin, checker);
});
afterAll(() => {
  unwatch();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("response validation against the OpenAPI document", () => {
  it("passes answers that honour the document", async () => {
    expect((await http.get("/api/v1/things/abc")).body.data.thing.id).toBe("abc");
    // Outside the contract on purpose, still in the error envelope: unknown path, other method, bad JSON.
    expect((await http.get("/api/v1/nowhere")).status).toBe(404);
    expect((await http.delete("/api/v1/things/abc")).status).toBe(405);
    expect((await http.request("POST", "/api/v1/things", { rawBody: "{nope" })).body.error.type).toBe("INVALID_JSON");
  });

  it("fails the call on an undocumented status, naming method, path and status", async () => {
    await expect(http.get("/api/v1/teapot")).rejects.toThrow(/Contract mismatch: GET \/api\/v1\/teapot → 418: status 418 is not documented .*error.type TEAPOT/);
    await expect(http.post("/api/v1/things", { name: "x" })).rejects.toThrow(/POST \/api\/v1\/things → 200: status 200 is not documented/);
  });

  it("fails the call on a body of the wrong shape, with the schema errors", async () => {
    await expect(http.get("/api/v1/shape")).rejects.toThrow(/GET \/api\/v1\/shape → 200: the body does not match the schema of 200: .*\/data\/thing\/id must be string.*\/data\/thing\/count must be integer/);
    await expect(http.get("/api/v1/bare")).rejects.toThrow(/must have required property 'version'/);
  });

  it("checks answers a test fetches without the HttpClient too", async () => {
    expect((await fetch(`${origin}/api/v1/things/abc`)).status).toBe(200);
    await expect(fetch(`${origin}/api/v1/shape`)).rejects.toThrow(/GET \/api\/v1\/shape → 200: the body does not match/);
  });
});

describe("the generated document states the REST facts an outside client check found missing", () => {
  type Op = { requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> }; security?: unknown[]; responses: Record<string, { content?: Record<string, unknown> }> };
  let paths: Record<string, Record<string, Op>>;
  beforeAll(async () => {
    paths = (JSON.parse((await renderContracts()).openapi) as { paths: typeof paths }).paths;
  });
  const op = (method: string, path: string) => paths[`/api/v1${path}`]![method]!;

  it("declares the bodies the server reads", () => {
    expect(Object.keys(op("put", "/organizations/{orgId}/security-policy").requestBody!.content["application/json"]!.schema.properties!)).toContain("mfa_policy_mode");
    expect(op("post", "/auth/totp/verify").requestBody).toBeDefined();
    expect(op("post", "/auth/totp/verify-enrollment").requestBody).toBeDefined();
    expect(op("patch", "/auth/webauthn/credentials/{credentialId}").requestBody).toBeDefined();
    expect(Object.keys(op("delete", "/auth/totp/disable").requestBody!.content["application/json"]!.schema.properties!)).toEqual(["password"]);
    const bodiless = Object.entries(paths).flatMap(([p, ms]) => Object.entries(ms).filter(([m, o]) => ["post", "put", "patch"].includes(m) && !o.requestBody).map(([m]) => `${m} ${p}`));
    // Those take no input at all (the path says everything).
    expect(bodiless.every((o) => !/security-policy|totp\/verify|credentials\//.test(o))).toBe(true);
  });

  it("documents optional authentication, redirects, the binary KRL and the 201 of a first provider configuration", () => {
    expect(op("post", "/auth/logout").security).toEqual([{}, { bearerAuth: [] }, { cookieAuth: [] }]);
    expect(op("post", "/auth/logout").responses["200"]).toBeDefined();
    expect(Object.keys(op("get", "/token_please").responses)).toContain("302");
    expect(op("get", "/token_please").responses["200"]).toBeUndefined();
    expect(Object.keys(op("get", "/auth/token").responses)).toEqual(expect.arrayContaining(["200", "302"]));
    expect(Object.keys(op("get", "/auth/external/{provider}/authorize").responses)).toEqual(expect.arrayContaining(["200", "303"]));
    expect(Object.keys(op("get", "/auth/external/{provider}/callback").responses)).toContain("303");
    expect(Object.keys(op("get", "/organizations/{orgId}/ssh/krl").responses["200"]!.content!)).toEqual(["application/octet-stream"]);
    expect(Object.keys(op("put", "/admin/oauth/providers/{provider}").responses)).toEqual(expect.arrayContaining(["200", "201"]));
    expect(Object.keys(op("post", "/organizations/{orgId}/leave").responses)).toEqual(expect.arrayContaining(["401", "403", "404"]));
  });
});
