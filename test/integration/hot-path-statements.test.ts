import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { statementCounter } from "../helpers/statements.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { registerClient, REDIRECT, type RegisteredClient } from "../factories/oidc.js";
import { orgWithRoles } from "../factories/orgs.js";
import { PASSWORD, type TestUser } from "../factories/users.js";

/**
 * The database statements of the paths `npm run bench` measures (issue 38): an OIDC refresh grant
 * with rotation, a client-credentials grant and a password sign-in. Each is bounded here, so that a
 * change that adds a round trip to one of them shows as a failing count rather than as a slower
 * bench on a noisy machine. Counted as the fewest of three runs: what the app does on a clock beside
 * the request (a job's poll, a batched write of other requests) only ever adds to one of them.
 */
let app: TestApp;
let admin: TestUser;
let client: RegisteredClient;
const counter = statementCounter();

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" }, { onStatement: counter.onStatement });
  let org: { id: string };
  ({ org, admin } = await orgWithRoles(app));
  client = await registerClient(app, org.id, admin, { redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token", "client_credentials"] });
});
afterAll(() => app?.close());

const basic = () => `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString("base64")}`;

async function token(form: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(`${app.url}/api/v1/oidc/token`, {
    method: "POST",
    headers: { authorization: basic(), "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });
  const body = (await res.json()) as Record<string, unknown>;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** The fewest statements of three runs of `run` (after one that fills the caches it may use). */
const fewestStatements = (run: () => Promise<void>) => counter.fewest(run, 3);

describe("statements per request on the benched paths", () => {
  it("a refresh grant with rotation: the token read with its grant and account, the rotation written with its audit record", async () => {
    // As the bench obtains its refresh tokens: a code flow with PKCE for `openid offline_access`.
    const agent = new OidcAgent(app.url);
    await agent.signIn(admin.email, PASSWORD);
    const verifier = randomBytes(32).toString("base64url");
    const params = new URLSearchParams({
      client_id: client.clientId,
      response_type: "code",
      redirect_uri: REDIRECT,
      scope: "openid offline_access",
      prompt: "consent",
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    });
    const stop = await agent.follow(`${app.url}/api/v1/oidc/authorize?${params}`, REDIRECT);
    const code = new URL(stop.url).searchParams.get("code") ?? "";
    let refresh = String((await token({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier })).refresh_token);
    const { count, sql } = await fewestStatements(async () => {
      refresh = String((await token({ grant_type: "refresh_token", refresh_token: refresh })).refresh_token);
    });
    expect(count, sql.join("\n---\n")).toBeLessThanOrEqual(2);
  });

  it("a client-credentials grant: the token saved with its audit record", async () => {
    const { count, sql } = await fewestStatements(async () => {
      await token({ grant_type: "client_credentials" });
    });
    expect(count, sql.join("\n---\n")).toBeLessThanOrEqual(1);
  });

  it("a password sign-in: the address's SSO requirement, the account with its hash and MFA, the sign-in written with its audit record", async () => {
    const { count, sql } = await fewestStatements(async () => {
      const res = await app.http.post("/api/v1/auth/login", { email: admin.email, password: PASSWORD });
      expect(res.status, res.text).toBe(200);
    });
    expect(count, sql.join("\n---\n")).toBeLessThanOrEqual(3);
  });
});
