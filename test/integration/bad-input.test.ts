import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { restRoutes } from "../../rest-shim/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { countRows } from "../helpers/db.js";
import { newSuperadmin, newUser } from "../factories/users.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

const WRITE_TABLES = ["users", "password_credentials", "user_tokens", "email_outbox"];
const snapshot = async () => Object.fromEntries(await Promise.all(WRITE_TABLES.map(async (t) => [t, await countRows(app, t)])));

/** Wrong-typed, oversized and hostile values for each field of a route's body schema. */
function hostileBodies(schema: z.ZodType | undefined): unknown[] {
  const json = schema ? (z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as { properties?: Record<string, unknown> }) : {};
  const fields = Object.keys(json.properties ?? {}).map((k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
  const values = [null, 12345, true, [], { $gt: "" }, "x".repeat(5000), "'; drop table users; --", "\u0000\uFFFF"];
  const bodies: unknown[] = [{}, { unknown_field: "ignored?" }];
  for (const f of fields) for (const v of values) bodies.push({ [f]: v });
  bodies.push(Object.fromEntries(fields.map((f) => [f, { nested: { deeper: [1, 2, 3] } }])));
  return bodies;
}

const RAW_BODIES = ["[]", "[1,2]", '"a string"', "123", "null", "{", '{"a":' + "[".repeat(200) + "]".repeat(200) + "}"];

describe("bad input on every REST route", () => {
  it("answers 4xx with the envelope, never 5xx, and writes nothing", async () => {
    const admin = await newSuperadmin(app);
    const routes = restRoutes(app.services, app.container.config);
    const before = await snapshot();
    const failures: string[] = [];

    for (const route of routes) {
      const paths = [route.path.replace(/:(\w+)/g, "00000000-0000-4000-8000-000000000000"), route.path.replace(/:(\w+)/g, "not-an-id%00")];
      for (const path of paths) {
        const requests: Array<{ rawBody?: string; body?: unknown; query?: string }> =
          route.method === "get"
            ? ["", "?redirect=a&redirect=b", "?x[y]=1", `?redirect=${"x".repeat(3000)}`, "?%E0%A4%A=1"].map((query) => ({ query }))
            : [...hostileBodies(route.body).map((body) => ({ body })), ...RAW_BODIES.map((rawBody) => ({ rawBody }))];
        for (const r of requests) {
          // A fresh session each time: some routes (logout, delete) end the one they are called with.
          const session = await app.services.sessions.create(admin.id, { rememberMe: false, ip: null, userAgent: null });
          const { query = "", ...body } = r;
          const res = await app.http.request(route.method.toUpperCase(), `/api/v1${path}${query}`, { ...body, token: session.token });
          const label = `${route.method.toUpperCase()} ${path} ${JSON.stringify(r).slice(0, 80)}`;
          // 503 CA_NOT_CONFIGURED is the original API's answer for signing without any CA: a state, not bad input.
          if (res.status >= 500 && res.body?.error?.type !== "CA_NOT_CONFIGURED") failures.push(`${label} → ${res.status} ${res.text.slice(0, 120)}`);
          if (res.status >= 400 && (res.body?.success !== false || typeof res.body?.error?.type !== "string")) {
            failures.push(`${label} → not an error envelope`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
    const after = await snapshot();
    expect(after).toEqual(before);
  }, 180_000);

  it("refuses malformed query values on the token hand-off and ignores unknown ones", async () => {
    const user = await newUser(app);
    for (const q of ["redirect=a&redirect=b", "redirect=" + "x".repeat(3000)]) {
      const res = await app.http.get(`/api/v1/auth/token?${q}`, { token: user.token });
      expect(res.status).toBe(400);
      expect(res.body.error.type).toMatch(/VALIDATION_ERROR|INVALID_REDIRECT/);
    }
    const unknown = await app.http.get("/api/v1/auth/token?foo[bar]=1", { token: user.token });
    expect(unknown.status).toBe(200);
  });
});
