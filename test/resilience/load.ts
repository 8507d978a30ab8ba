import { generateKeyPairSync } from "node:crypto";
import { blobFromKeyObject } from "../../src/lib/ssh/index.js";
import { keywardTarget, type GrantTarget } from "../../bench/oidc.js";
import { linkIn, tokenFrom, type SmtpSink } from "../helpers/smtp-sink.js";

/**
 * Write load against one running Keyward process, recording what it acknowledged (a 2xx answer
 * read in full) apart from what was only in flight: the crash test compares both with the rows.
 */
export const PASSWORD = "correct horse battery staple";

export interface Answer {
  status: number;
  data: Record<string, any>;
}

export async function call(base: string, path: string, body?: unknown, token?: string): Promise<Answer> {
  const res = await fetch(base + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => ({}))) as { data?: Record<string, any> };
  return { status: res.status, data: json.data ?? {} };
}

const basic = (t: GrantTarget) => `Basic ${Buffer.from(`${t.clientId}:${t.clientSecret}`).toString("base64")}`;

export async function refresh(target: GrantTarget, token: string): Promise<{ status: number; refreshToken?: string; accessToken?: string }> {
  const res = await fetch(target.tokenUrl, {
    method: "POST",
    headers: { authorization: basic(target), "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: token }).toString(),
  });
  const body = (await res.json().catch(() => ({}))) as { refresh_token?: string; access_token?: string };
  return { status: res.status, refreshToken: body.refresh_token, accessToken: body.access_token };
}

/** An organization with a user CA, a key to sign, an OIDC client with refresh chains, and open invitations. */
export interface Fixture {
  owner: { email: string; token: string; id: string };
  orgId: string;
  keyId: string;
  oidc: GrantTarget;
  invites: Array<{ email: string; token: string }>;
}

/** An owner signed in, with an organization, a user CA, the principal "app" and an SSH key to sign. */
export async function signingOwner(base: string, label: string): Promise<{ email: string; token: string; userId: string; orgId: string; keyId: string }> {
  const email = `${label}.owner.${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.com`;
  if ((await call(base, "/api/v1/auth/register", { email, password: PASSWORD, full_name: "Owner" })).status !== 201) throw new Error("register failed");
  const login = await call(base, "/api/v1/auth/login", { email, password: PASSWORD });
  const token = String(login.data.token);
  const org = await call(base, "/api/v1/organizations", { name: `${label} ${Date.now()}` }, token);
  const orgId = String(org.data.organization.id);
  if ((await call(base, `/api/v1/organizations/${orgId}/cas`, { name: `${label} CA` }, token)).status !== 201) throw new Error("CA failed");
  await call(base, `/api/v1/organizations/${orgId}/principals`, { name: "app" }, token);
  const blob = blobFromKeyObject(generateKeyPairSync("ed25519").publicKey);
  const key = await call(base, "/api/v1/ssh/keys", { key: `ssh-ed25519 ${blob.toString("base64")} ${label}` }, token);
  return { email, token, userId: String(login.data.user.id), orgId, keyId: String(key.data.id) };
}

export async function prepare(base: string, mail: SmtpSink, opts: { chains: number; invites: number }): Promise<Fixture> {
  const { email, token, userId, orgId, keyId } = await signingOwner(base, "crash");
  const oidc = await keywardTarget(base, token, orgId, { email, password: PASSWORD }, opts.chains);
  const invited = Array.from({ length: opts.invites }, (_, i) => `crash.invitee.${i}.${Date.now()}@example.com`);
  for (const to of invited) {
    const res = await call(base, `/api/v1/organizations/${orgId}/invites`, { email: to, role: "member" }, token);
    if (res.status !== 201) throw new Error(`invite failed: ${res.status}`);
  }
  for (let i = 0; i < 200 && invited.some((to) => !mail.lastWith(to, "/invite?token=")); i++) await new Promise((r) => setTimeout(r, 50));
  const invites = invited.map((to) => ({ email: to, token: tokenFrom(linkIn(mail.lastWith(to, "/invite?token="), "/invite")) }));
  return { owner: { email, token, id: userId }, orgId, keyId, oidc, invites };
}

/** What the load got acknowledged (2xx), and what it had in flight when the process died. */
export interface Ledger {
  certificates: Array<{ certId: string; serial: string }>;
  accepted: Array<{ email: string; userId: string }>;
  registered: string[];
  /** Per chain: every token the provider handed out, in order (the first from the fixture). */
  chains: string[][];
  /** Chains whose last refresh got no answer. */
  chainsInFlight: Set<number>;
  /** Answers ≥ 500 while the process was still up. */
  serverErrors: string[];
}

/**
 * Runs signers, invitation acceptances, registrations and refresh rotations in parallel loops
 * until the process dies under them: the connection error ends each loop.
 */
export function driveLoad(base: string, f: Fixture, workers = { sign: 3, accept: 2, register: 2 }) {
  const ledger: Ledger = { certificates: [], accepted: [], registered: [], chains: f.oidc.refreshTokens.map((t) => [t]), chainsInFlight: new Set(), serverErrors: [] };
  const loop = async (step: () => Promise<boolean>) => {
    try {
      while (await step());
    } catch {
      // The process died under this request: its write was not acknowledged.
    }
  };
  const check = (what: string, status: number) => {
    if (status >= 500) ledger.serverErrors.push(`${what} ${status}`);
    return status;
  };
  const invites = [...f.invites];
  let seq = 0;
  const runs = [
    ...Array.from({ length: workers.sign }, () =>
      loop(async () => {
        const res = await call(base, "/api/v1/ssh/sign", { key_id: f.keyId, principals: ["app"] }, f.owner.token);
        if (check("sign", res.status) === 201) ledger.certificates.push({ certId: String(res.data.cert_id), serial: String(res.data.serial) });
        return true;
      }),
    ),
    ...Array.from({ length: workers.accept }, () =>
      loop(async () => {
        // A few are left open, for the restarted instance to accept.
        const invite = invites.length > 5 ? invites.shift() : undefined;
        if (!invite) return false;
        const res = await call(base, `/api/v1/invites/${invite.token}/accept`, { password: PASSWORD, full_name: "Invitee" });
        if (check("accept", res.status) === 200) ledger.accepted.push({ email: invite.email, userId: String(res.data.user.id) });
        return true;
      }),
    ),
    ...Array.from({ length: workers.register }, () =>
      loop(async () => {
        const email = `crash.reg.${seq++}.${Date.now()}@example.com`;
        const res = await call(base, "/api/v1/auth/register", { email, password: PASSWORD, full_name: "Reg" });
        if (check("register", res.status) === 201) ledger.registered.push(email);
        return true;
      }),
    ),
    ...ledger.chains.map((chain, i) =>
      loop(async () => {
        ledger.chainsInFlight.add(i);
        const res = await refresh(f.oidc, chain.at(-1)!);
        ledger.chainsInFlight.delete(i);
        if (check("refresh", res.status) !== 200 || !res.refreshToken) return false;
        chain.push(res.refreshToken);
        return true;
      }),
    ),
  ];
  return { ledger, done: Promise.all(runs) };
}
