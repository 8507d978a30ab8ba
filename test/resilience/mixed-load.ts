import { keywardTarget, type GrantTarget } from "../../bench/oidc.js";
import { call, PASSWORD, signingOwner } from "./load.js";

/**
 * Mixed read and write load against one Keyward address (an instance, or the shared port of its
 * workers), the way a day's traffic looks: password sign-ins, GraphQL `{ me }`, certificate
 * signing, client-credentials grants and refresh rotations, each kind in its own loops. Every
 * answer is recorded with the phase it was sent in, so a test can say what was answered while a
 * dependency was down, what the client never heard back, and which writes were acknowledged.
 */
export type Kind = "login" | "me" | "sign" | "client_credentials" | "refresh";
/** "returning": the dependency is being started again (answers may already come from it). */
export type Phase = "before" | "outage" | "returning" | "after";

export interface Outcome {
  kind: Kind;
  phase: Phase;
  /** The HTTP status, or 0 when no answer arrived (the connection was cut or refused). */
  status: number;
  /** GraphQL's `extensions.code` or REST's error type or OAuth's `error`, when the answer was an error. */
  code?: string;
  retryAfter?: string | null;
  /** When the answer arrived (Date.now()). */
  at: number;
}

export interface MixedFixture {
  email: string;
  token: string;
  orgId: string;
  keyId: string;
  oidc: GrantTarget;
}

/** An owner with an organization, a user CA, a principal, an SSH key and an OIDC client holding `chains` refresh tokens. */
export async function prepareMixed(base: string, chains: number): Promise<MixedFixture> {
  const { email, token, orgId, keyId } = await signingOwner(base, "mixed");
  const oidc = await keywardTarget(base, token, orgId, { email, password: PASSWORD }, chains);
  return { email, token, orgId, keyId, oidc };
}

const basic = (t: GrantTarget) => `Basic ${Buffer.from(`${t.clientId}:${t.clientSecret}`).toString("base64")}`;

async function answer(kind: Kind, phase: Phase, res: Response): Promise<{ outcome: Outcome; body: any }> {
  const text = await res.text();
  let body: any = {};
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a page, or nothing): the status says enough.
  }
  const code = body?.errors?.[0]?.extensions?.code ?? body?.error?.type ?? (typeof body?.error === "string" ? body.error : undefined);
  return { outcome: { kind, phase, status: res.status, code, retryAfter: res.headers.get("retry-after"), at: Date.now() }, body };
}

/**
 * Runs `loops` loops per kind (5 kinds) until `stop()`; `phase` is read at each request. A loop
 * whose session is gone (Redis lost it) signs in again once the phase is "after".
 */
export function driveMixed(base: string, f: MixedFixture, phase: () => Phase, loops = 7) {
  const outcomes: Outcome[] = [];
  const certificates: Array<{ certId: string; serial: string }> = [];
  const chains = f.oidc.refreshTokens.map((t) => [t]);
  let running = true;
  let token = f.token;
  const record = (o: Outcome) => (outcomes.push(o), o);
  const relogin = async () => {
    const login = await call(base, "/api/v1/auth/login", { email: f.email, password: PASSWORD });
    if (login.status === 200) token = String(login.data.token);
  };
  const loop = (kind: Kind, step: (p: Phase) => Promise<Outcome | undefined>) =>
    (async () => {
      while (running) {
        const p = phase();
        let o: Outcome | undefined;
        try {
          o = await step(p);
        } catch (e) {
          // No answer: what the client saw (a refused or reset connection, a closed socket).
          const cause = (e as { cause?: { code?: string; message?: string } }).cause;
          o = record({ kind, phase: p, status: 0, code: cause?.code ?? cause?.message ?? String(e), at: Date.now() });
        }
        if (o && o.status === 401 && phase() === "after") await relogin().catch(() => {});
        // A refused request fails fast: a short pause keeps a loop from spinning while the port is down.
        if (!o || o.status === 0 || o.status >= 500) await new Promise((r) => setTimeout(r, 20));
      }
    })();
  const json = { "content-type": "application/json" };
  const runs = [
    ...Array.from({ length: loops }, () =>
      loop("login", async (p) => {
        const res = await fetch(`${base}/api/v1/auth/login`, { method: "POST", headers: json, body: JSON.stringify({ email: f.email, password: PASSWORD }) });
        return record((await answer("login", p, res)).outcome);
      }),
    ),
    ...Array.from({ length: loops }, () =>
      loop("me", async (p) => {
        const res = await fetch(`${base}/graphql`, { method: "POST", headers: { ...json, authorization: `Bearer ${token}` }, body: JSON.stringify({ query: "{ me { id email } }" }) });
        return record((await answer("me", p, res)).outcome);
      }),
    ),
    ...Array.from({ length: loops }, () =>
      loop("sign", async (p) => {
        const res = await fetch(`${base}/api/v1/ssh/sign`, { method: "POST", headers: { ...json, authorization: `Bearer ${token}` }, body: JSON.stringify({ key_id: f.keyId, principals: ["app"] }) });
        const { outcome, body } = await answer("sign", p, res);
        if (outcome.status === 201) certificates.push({ certId: String(body.data.cert_id), serial: String(body.data.serial) });
        return record(outcome);
      }),
    ),
    ...Array.from({ length: loops }, () =>
      loop("client_credentials", async (p) => {
        const res = await fetch(f.oidc.tokenUrl, {
          method: "POST",
          headers: { authorization: basic(f.oidc), "content-type": "application/x-www-form-urlencoded" },
          body: "grant_type=client_credentials",
        });
        return record((await answer("client_credentials", p, res)).outcome);
      }),
    ),
    ...chains.map((chain) =>
      loop("refresh", async (p) => {
        const res = await fetch(f.oidc.tokenUrl, {
          method: "POST",
          headers: { authorization: basic(f.oidc), "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: chain.at(-1)! }).toString(),
        });
        const { outcome, body } = await answer("refresh", p, res);
        if (outcome.status === 200 && body.refresh_token) chain.push(body.refresh_token);
        return record(outcome);
      }),
    ),
  ];
  return {
    outcomes,
    certificates,
    chains,
    async stop() {
      running = false;
      await Promise.all(runs);
    },
  };
}

