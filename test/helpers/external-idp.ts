import { sql } from "drizzle-orm";
import { resultRows } from "../../src/infra/db.js";
import { afterAll, beforeAll } from "vitest";
import { startTestApp, type TestApp } from "./app.js";
import { startFakeGithub, type FakeGithub, type GithubAccount } from "./fake-github.js";
import { startFakeGoogle, type FakeGoogle, type GoogleAccount } from "./fake-google.js";
import { OidcAgent } from "./oidc-agent.js";

export const GITHUB = { clientId: "Iv1.keyward-test", clientSecret: "github-test-secret" };
export const GOOGLE = { clientId: "keyward-test.apps.googleusercontent.com", clientSecret: "google-test-secret" };

export interface FakeIdps {
  github: FakeGithub;
  google: FakeGoogle;
  /** Environment pointing Keyward at the fakes. */
  env: Record<string, string>;
  /** Registers the app's callback URLs at the fakes once its address is known. */
  register(app: TestApp): void;
  close(): Promise<void>;
}

export async function startFakeIdps(): Promise<FakeIdps> {
  const githubOpts = { ...GITHUB, callbackUrl: "http://127.0.0.1/" };
  const googleOpts = { ...GOOGLE, redirectUri: "" };
  const github = await startFakeGithub(githubOpts);
  const google = await startFakeGoogle(googleOpts);
  return {
    github,
    google,
    env: {
      GITHUB_CLIENT_ID: GITHUB.clientId,
      GITHUB_CLIENT_SECRET: GITHUB.clientSecret,
      GITHUB_OAUTH_URL: github.url,
      GITHUB_API_URL: github.url,
      GOOGLE_CLIENT_ID: GOOGLE.clientId,
      GOOGLE_CLIENT_SECRET: GOOGLE.clientSecret,
      GOOGLE_ISSUER: google.url,
    },
    register(app) {
      githubOpts.callbackUrl = `${app.url}/api/v1/auth/external/github/callback`;
      googleOpts.redirectUri = `${app.url}/api/v1/auth/external/google/callback`;
    },
    async close() {
      await github.close();
      await google.close();
    },
  };
}

let seq = 1000;
export function githubAccount(email: string, extra: Partial<GithubAccount> = {}): GithubAccount {
  const id = seq++;
  return { id, login: `octo${id}`, name: `Octo ${id}`, email: null, emails: [{ email, primary: true, verified: true, visibility: "private" }], ...extra };
}

export function googleAccount(email: string, extra: Partial<GoogleAccount> = {}): GoogleAccount {
  return { sub: `1${String(seq++).padStart(20, "0")}`, email, email_verified: true, name: "Gail Google", ...extra };
}

export interface FlowResult {
  /** The authorize endpoint's answer. */
  status: number;
  body: any;
  /** Where Keyward sent the browser after the callback (not fetched). */
  landing?: URL;
  /** The callback URL the provider sent the browser to. */
  callback?: string;
}

/**
 * A browser going through an external sign-in: asks Keyward for the authorization URL, follows
 * the provider's redirects back to the callback, and stops at the page Keyward lands on.
 */
export async function runExternalFlow(app: TestApp, browser: OidcAgent, provider: string, query: Record<string, string> = {}, token?: string): Promise<FlowResult> {
  const start = await browser.fetch(`${app.url}/api/v1/auth/external/${provider}/authorize?${new URLSearchParams({ flow: "login", ...query })}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const body = await start.json();
  if (start.status !== 200) return { status: start.status, body };
  let url = body.data.authorization_url as string;
  let callback: string | undefined;
  for (let hop = 0; hop < 10; hop++) {
    const res = await browser.fetch(url);
    const location = res.headers.get("location");
    if (!location) throw new Error(`flow stopped at ${url}: ${res.status} ${await res.text()}`);
    const next = new URL(location, url);
    if (next.pathname.startsWith(`/api/v1/auth/external/${provider}/callback`)) callback = next.toString();
    if (next.origin === app.url && !next.pathname.startsWith("/api/v1/auth/external/")) return { status: 200, body, landing: next, callback };
    url = next.toString();
  }
  throw new Error("too many redirects");
}

/** Stops at the provider's redirect back: the callback URL, not yet visited. */
export async function callbackUrlFor(app: TestApp, browser: OidcAgent, provider: string, query: Record<string, string> = {}): Promise<string> {
  const start = await browser.fetch(`${app.url}/api/v1/auth/external/${provider}/authorize?${new URLSearchParams({ flow: "login", ...query })}`);
  const body = await start.json();
  const res = await browser.fetch(body.data.authorization_url);
  return new URL(res.headers.get("location")!, body.data.authorization_url).toString();
}

/** Visits a callback URL and returns where Keyward sends the browser. */
export async function visitCallback(browser: OidcAgent, callback: string): Promise<URL> {
  const res = await browser.fetch(callback);
  return new URL(res.headers.get("location")!, callback);
}

export const newBrowser = (app: TestApp) => new OidcAgent(app.url);

/** The error code an external flow landed with. */
export const errorOf = (landing: URL | undefined) => landing?.searchParams.get("error_type");

/** Metadata (and user) of the failure audits with this action and error code, newest first. */
export async function auditFailures(app: TestApp, action: string, code: string): Promise<Array<Record<string, unknown>>> {
  const result = await app.container.db.execute(sql`select metadata, user_id from audit_logs where action = ${action} and metadata->>'code' = ${code} order by created_at desc`);
  return resultRows<{ metadata: Record<string, unknown>; user_id: string | null }>(result).map((r) => ({ ...r.metadata, user_id: r.user_id }));
}

/**
 * For a test file: a Keyward wired to fresh GitHub and Google stand-ins, started before its tests
 * and stopped after them. Read `app` and `idps` inside hooks and tests.
 */
export function externalIdpSuite(env: Record<string, string> = {}): { app: TestApp; idps: FakeIdps } {
  const suite = {} as { app: TestApp; idps: FakeIdps };
  beforeAll(async () => {
    suite.idps = await startFakeIdps();
    suite.app = await startTestApp({ ...suite.idps.env, RATE_LIMIT_ENABLED: "false", ...env });
    suite.idps.register(suite.app);
  });
  afterAll(async () => {
    await suite.app?.close();
    await suite.idps?.close();
  });
  return suite;
}
