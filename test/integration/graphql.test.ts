import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderContracts } from "../../src/tasks/emit-schema.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { sessionCookie } from "../helpers/http.js";
import { login, newSuperadmin, newUser, PASSWORD, uniqueEmail } from "../factories/users.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ GRAPHQL_MAX_DEPTH: "4", GRAPHQL_MAX_COMPLEXITY: "40" });
});
afterAll(() => app?.close());

describe("GraphQL over the same services", () => {
  it("registers, signs in with a cookie, and reads the user", async () => {
    const email = uniqueEmail("gql");
    const reg = await app.http.gql("mutation($i: RegisterInput!) { register(input: $i) { email message } }", {
      i: { email, password: PASSWORD, fullName: "Graph Q" },
    });
    expect(reg.data.register.email).toBe(email);
    const res = await app.http.gql("mutation($i: LoginInput!) { login(input: $i) { user { email fullName } expiresAt } }", { i: { email, password: PASSWORD } });
    expect(res.data.login.user).toEqual({ email, fullName: "Graph Q" });
    expect(JSON.stringify(res.data)).not.toContain("kws_");
    const cookie = sessionCookie(res.headers);
    const me = await app.http.gql("{ me { email hasPassword emailVerified } }", {}, { cookie });
    expect(me.data.me).toEqual({ email, hasPassword: true, emailVerified: false });
  });

  it("answers the same error codes as REST for the same mistakes", async () => {
    const user = await newUser(app);
    const cases: Array<{ rest: () => Promise<any>; gql: () => Promise<any> }> = [
      {
        rest: () => login(app, user.email, "wrong password!"),
        gql: () => app.http.gql("mutation { login(input: { email: \"" + user.email + "\", password: \"wrong password!\" }) { expiresAt } }"),
      },
      {
        rest: () => app.http.post("/api/v1/auth/register", { email: "not-an-email", password: PASSWORD }),
        gql: () => app.http.gql("mutation { register(input: { email: \"not-an-email\", password: \"" + PASSWORD + "\" }) { email } }"),
      },
      { rest: () => app.http.get("/api/v1/users/me"), gql: () => app.http.gql("{ me { id } }") },
      {
        rest: () => app.http.post("/api/v1/auth/verify-email", { token: "nope" }),
        gql: () => app.http.gql("mutation { verifyEmail(token: \"nope\") { id } }"),
      },
      {
        rest: () => app.http.post("/api/v1/users/me/password", { current_password: "bad one", new_password: "new passphrase ok" }, { token: user.token }),
        gql: () =>
          app.http.gql("mutation { changePassword(input: { currentPassword: \"bad one\", newPassword: \"new passphrase ok\" }) { message } }", {}, { token: user.token }),
      },
    ];
    for (const c of cases) {
      const rest = await c.rest();
      const gql = await c.gql();
      expect(gql.errors?.[0]?.extensions?.code).toBe(rest.body.error.type);
      expect(gql.errors?.[0]?.extensions?.status).toBe(rest.status);
    }
  });

  it("puts validation details in extensions", async () => {
    const res = await app.http.gql("mutation { register(input: { email: \"a@b.co\", password: \"short\" }) { email } }");
    expect(res.errors[0].extensions.code).toBe("VALIDATION_ERROR");
    expect(res.errors[0].extensions.details.errors[0].path).toBe("password");
  });

  it("never leaks an internal error's cause", async () => {
    const res = await app.http.gql("{ me { id } }", {}, { token: "kws_" + "x".repeat(43) });
    expect(res.errors[0].extensions.code).toBe("INVALID_TOKEN");
    expect(JSON.stringify(res)).not.toMatch(/stack|at .*\.ts/);
  });
});

describe("limits", () => {
  it("refuses queries costlier than GRAPHQL_MAX_COMPLEXITY", async () => {
    const user = await newUser(app);
    const cheap = await app.http.gql("{ a: me { id } b: health { status } }", {}, { token: user.token });
    expect(cheap.errors).toBeUndefined();
    const aliased = "{ " + Array.from({ length: 30 }, (_, i) => `m${i}: me { id email fullName }`).join(" ") + " }";
    const costly = await app.http.gql(aliased, {}, { token: user.token });
    expect(costly.errors[0].extensions.code).toBe("QUERY_TOO_COMPLEX");
  });

  it("answers a document with several operations and no operationName with 400, whatever their variables", async () => {
    // Found by the fuzz: the cost check measured every operation and coerced their missing variables (a 500).
    const twice = "query A($orgId: ID!) { departments(orgId: $orgId) { id } } query B($orgId: ID!) { departments(orgId: $orgId) { id } }";
    for (const body of [{ query: twice }, { query: twice, operationName: "C" }]) {
      const res = await app.http.post("/graphql", body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].extensions).toEqual({ code: "OPERATION_RESOLUTION_FAILURE", status: 400 });
    }
    const named = await app.http.post("/graphql", { query: twice, operationName: "A" });
    expect(named.body.errors[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", status: 400 });
  });

  it("refuses queries deeper than GRAPHQL_MAX_DEPTH, counting through fragments", async () => {
    const strict = await startTestApp({ GRAPHQL_MAX_DEPTH: "2" });
    try {
      const user = await newUser(strict);
      const ok = await strict.http.gql("{ me { id } }", {}, { token: user.token });
      expect(ok.errors).toBeUndefined();
      const res = await strict.http.gql(
        "mutation($i: LoginInput!) { login(input: $i) { ...P } } fragment P on AuthPayload { user { id } }",
        { i: { email: user.email, password: PASSWORD } },
      );
      expect(res.errors[0].extensions.code).toBe("QUERY_TOO_DEEP");
    } finally {
      await strict.close();
    }
  });
});

describe("introspection and the IDE", () => {
  const INTROSPECT = "{ __schema { queryType { name } } }";

  it("refuses introspection to ordinary users outside development and allows superadmins", async () => {
    const user = await newUser(app);
    const denied = await app.http.gql(INTROSPECT, {}, { token: user.token });
    expect(denied.errors[0].extensions.code).toBe("INTROSPECTION_DISABLED");
    const anonymous = await app.http.gql(INTROSPECT);
    expect(anonymous.errors[0].extensions.code).toBe("INTROSPECTION_DISABLED");
    const admin = await newSuperadmin(app);
    const allowed = await app.http.gql(INTROSPECT, {}, { token: admin.token });
    expect(allowed.data.__schema.queryType.name).toBe("Query");
  });

  it("serves a self-contained GraphiQL page to superadmins only", async () => {
    const admin = await newSuperadmin(app);
    const cookie = sessionCookie((await login(app, admin.email)).headers);
    const page = await app.http.get("/graphql", { cookie, headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.text).toContain("GraphiQL");
    // Works offline: no script or stylesheet is loaded from another host.
    expect(page.text).not.toMatch(/<script[^>]+src=["']https?:/i);
    expect(page.text).not.toMatch(/<link[^>]+href=["']https?:/i);
    const user = await newUser(app);
    const userCookie = sessionCookie((await login(app, user.email)).headers);
    const refused = await app.http.get("/graphql", { cookie: userCookie, headers: { accept: "text/html" } });
    expect(refused.text).not.toContain("GraphiQL");
  });

  it("serves GraphiQL to everyone in development", async () => {
    const dev = await startTestApp({ NODE_ENV: "development" });
    try {
      const page = await dev.http.get("/graphql", { headers: { accept: "text/html" } });
      expect(page.text).toContain("GraphiQL");
      expect((await dev.http.gql(INTROSPECT)).data.__schema.queryType.name).toBe("Query");
    } finally {
      await dev.close();
    }
  });
});

describe("committed contracts", () => {
  it("schema.graphql and openapi.json match the code (run npm run schema:emit)", async () => {
    const { sdl, openapi } = await renderContracts();
    expect(readFileSync("schema.graphql", "utf8")).toBe(sdl);
    expect(readFileSync("openapi.json", "utf8")).toBe(openapi);
  });

  it("serves the OpenAPI document of the mounted routes, built once for its first requests (20 at once)", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => app.http.get("/api/v1/openapi.json")));
    const committed = JSON.parse(readFileSync("openapi.json", "utf8"));
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual(committed);
    }
    expect(Object.keys(answers[0]!.body.paths)).toContain("/api/v1/auth/login");
  });
});
