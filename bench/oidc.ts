import { createHash, randomBytes } from "node:crypto";
import autocannon from "autocannon";
import { failures } from "./common.js";
import { OidcAgent } from "../test/helpers/oidc-agent.js";

/** OIDC grant scenarios for `npm run bench`, run the same way against Keyward and the bare provider. */
export interface GrantTarget {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** One refresh-token chain per concurrent worker. */
  refreshTokens: string[];
}

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  total: number;
}

const basic = (t: GrantTarget) => `Basic ${Buffer.from(`${t.clientId}:${t.clientSecret}`).toString("base64")}`;

function summarise(latencies: number[], seconds: number): Figures {
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!;
  return { rps: latencies.length / seconds, p50: pct(0.5), p99: pct(0.99), total: latencies.length };
}

/**
 * Refresh-token grants with rotation: each worker spends its refresh token and continues with
 * the one it gets back (a refresh token works once, so a fixed request body cannot be replayed).
 */
export async function refreshGrants(target: GrantTarget, durationSeconds: number): Promise<Figures> {
  const latencies: number[] = [];
  const until = performance.now() + durationSeconds * 1000;
  const started = performance.now();
  await Promise.all(
    target.refreshTokens.map(async (first) => {
      let token = first;
      while (performance.now() < until) {
        const t = performance.now();
        const res = await fetch(target.tokenUrl, {
          method: "POST",
          headers: { authorization: basic(target), "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: token }).toString(),
        });
        const body = (await res.json()) as { refresh_token?: string; error?: string };
        if (res.status !== 200 || !body.refresh_token) throw new Error(`refresh failed: ${res.status} ${JSON.stringify(body)}`);
        token = body.refresh_token;
        latencies.push(performance.now() - t);
      }
    }),
  );
  return summarise(latencies, (performance.now() - started) / 1000);
}

export async function clientCredentialsGrants(target: GrantTarget, durationSeconds: number, connections: number): Promise<Figures> {
  const r = await autocannon({
    url: target.tokenUrl,
    method: "POST",
    headers: { authorization: basic(target), "content-type": "application/x-www-form-urlencoded" },
    body: "grant_type=client_credentials",
    connections,
    duration: durationSeconds,
  });
  const bad = r.non2xx + r.errors + r.timeouts;
  if (bad > 0) failures.push(`client credentials at ${target.tokenUrl}: ${bad} failed requests`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total };
}

/** Registers a client in Keyward and obtains `n` refresh tokens through real code + PKCE flows. */
export async function keywardTarget(base: string, token: string, orgId: string, user: { email: string; password: string }, n: number): Promise<GrantTarget> {
  const redirect = "http://127.0.0.1:47999/cb";
  const res = await fetch(`${base}/api/v1/organizations/${orgId}/clients`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: "Bench RP", redirect_uris: [redirect], grant_types: ["authorization_code", "refresh_token", "client_credentials"] }),
  });
  const client = ((await res.json()) as { data: { client: { client_id: string; client_secret: string } } }).data.client;
  const agent = new OidcAgent(base);
  await agent.signIn(user.email, user.password);
  const target: GrantTarget = { tokenUrl: `${base}/api/v1/oidc/token`, clientId: client.client_id, clientSecret: client.client_secret, refreshTokens: [] };
  for (let i = 0; i < n; i++) {
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const params = new URLSearchParams({ client_id: client.client_id, response_type: "code", redirect_uri: redirect, scope: "openid offline_access", prompt: "consent", code_challenge: challenge, code_challenge_method: "S256" });
    const stop = await agent.follow(`${base}/api/v1/oidc/authorize?${params}`, redirect);
    const code = new URL(stop.url).searchParams.get("code");
    const tokens = await fetch(target.tokenUrl, {
      method: "POST",
      headers: { authorization: basic(target), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: code ?? "", redirect_uri: redirect, code_verifier: verifier }).toString(),
    });
    const body = (await tokens.json()) as { refresh_token?: string };
    if (!body.refresh_token) throw new Error(`no refresh token from Keyward: ${JSON.stringify(body)}`);
    target.refreshTokens.push(body.refresh_token);
  }
  return target;
}

export async function bareTarget(base: string, n: number): Promise<GrantTarget> {
  const refreshTokens = (await (await fetch(`${base}/seed?n=${n}`)).json()) as string[];
  return { tokenUrl: `${base}/token`, clientId: "bench", clientSecret: "bench-secret-bench-secret-bench-secret", refreshTokens };
}
