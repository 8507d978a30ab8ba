import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink.js";
import { startCluster, type Cluster, type Instance } from "./cluster.js";

/**
 * Two Keyward processes on one PostgreSQL database and one Redis (issue 18 item 4): what one
 * instance does, the other sees. Sessions live in Redis, rate limits count in Redis, and the
 * outbox workers of both instances drain one table, each email claimed by exactly one of them.
 */
let cluster: Cluster;
let mail: SmtpSink;
let a: Instance;
let b: Instance;

beforeAll(async () => {
  mail = await startSmtpSink();
  cluster = await startCluster({ EMAIL_PROVIDER: "smtp", SMTP_HOST: "127.0.0.1", SMTP_PORT: String(mail.port), EMAIL_WORKER_INTERVAL_MS: "100", RATE_LIMIT_CONTACT: "3/3600" });
  // Both start at once: the migrations run once, under their lock, and the other waits.
  [a, b] = await Promise.all([cluster.start(), cluster.start()]);
}, 120_000);
afterAll(async () => {
  await cluster?.close();
  await mail?.close();
});

const json = async (base: string, path: string, init: { method?: string; body?: unknown; token?: string } = {}) => {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? (init.body ? "POST" : "GET"),
    headers: { "content-type": "application/json", ...(init.token ? { authorization: `Bearer ${init.token}` } : {}) },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as { data?: Record<string, unknown>; error?: { type: string } } };
};
const PASSWORD = "correct horse battery staple";

describe("two instances on one PostgreSQL and Redis", () => {
  it("share sessions: signed in on one, known on the other; signed out on one, gone on both", async () => {
    const email = `two.${Date.now()}@example.com`;
    expect((await json(a.url, "/api/v1/auth/register", { body: { email, password: PASSWORD, full_name: "Two" } })).status).toBe(201);
    const signIn = await json(a.url, "/api/v1/auth/login", { body: { email, password: PASSWORD } });
    const token = String(signIn.body.data!.token);
    expect((await json(b.url, "/api/v1/auth/me", { token })).status).toBe(200);
    expect((await json(b.url, "/api/v1/auth/logout", { method: "POST", token })).status).toBe(200);
    expect((await json(a.url, "/api/v1/auth/me", { token })).status).toBe(401);
    expect((await json(b.url, "/api/v1/auth/me", { token })).status).toBe(401);
  });

  it("share rate limits: the budget spent on one is spent on the other", async () => {
    const message = { name: "Ada", email: "ada@example.com", subject: "Hello", message: "Two instances, one budget." };
    const answers = [];
    for (const instance of [a, b, a, b]) answers.push((await json(instance.url, "/api/v1/contact", { body: message })).status);
    expect(answers).toEqual([200, 200, 200, 429]);
  });

  it("send each email exactly once, whichever instance queued it and both workers draining", async () => {
    const recipients = Array.from({ length: 12 }, (_, i) => `once.${i}.${Date.now()}@example.com`);
    await Promise.all(recipients.map((email, i) => json(i % 2 ? a.url : b.url, "/api/v1/auth/register", { body: { email, password: PASSWORD, full_name: "Once" } })));
    for (let i = 0; i < 100 && recipients.some((r) => mail.to(r).length === 0); i++) await new Promise((r) => setTimeout(r, 100));
    // A little longer, for a duplicate to show up if there were one.
    await new Promise((r) => setTimeout(r, 1000));
    expect(recipients.map((r) => mail.to(r).length)).toEqual(recipients.map(() => 1));
  });
});
