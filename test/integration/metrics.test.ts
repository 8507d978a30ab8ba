import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { createMetricsServer } from "../../src/http/metrics.js";
import { startJobs } from "../../src/jobs/index.js";
import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { enrollTotp } from "../factories/mfa.js";
import { delegatedToken, refreshDelegated } from "../factories/oidc.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../factories/ssh.js";
import { login, newUser, type TestUser } from "../factories/users.js";

const TOKEN = "metrics-token-for-tests-0123456789abcdef";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format, one sample per line (comments skipped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** Sum of the samples of `name` whose labels include `labels`. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

let app: TestApp;
const scrape = async () => {
  const res = await app.http.get("/metrics", { token: TOKEN });
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return { text: res.text, samples: parse(res.text) };
};

beforeAll(async () => {
  app = await startTestApp({ METRICS_TOKEN: TOKEN, RATE_LIMIT_ENABLED: "false", EMAIL_WORKER_INTERVAL_MS: "50" });
});
afterAll(() => app?.close());

describe("/metrics after a scenario", () => {
  let user: TestUser;
  let member: TestUser;
  let orgId: string;
  let text: string;
  let samples: Sample[];
  let before: Sample[];

  beforeAll(async () => {
    before = (await scrape()).samples;
    // Accounts and sign-ins: two successful password sign-ins, one wrong password.
    user = await newUser(app);
    expect((await login(app, user.email, "not the password at all")).status).toBe(401);
    // GraphQL: a query, an error, a document that does not validate.
    expect((await app.http.gql("{ me { id email } }", {}, { token: user.token })).data.me.id).toBe(user.id);
    expect((await app.http.gql("{ me { id } }")).errors[0].extensions.code).toBe("AUTH_REQUIRED");
    expect((await app.http.gql("{ noSuchField }")).errors).toBeDefined();
    // MFA: a wrong code, then the right one.
    const mfaUser = await newUser(app);
    const { secret } = await enrollTotp(app, mfaUser);
    const pending = (await login(app, mfaUser.email)).body.data.mfa_token as string;
    const code = totpCode(secret, totpStep(app.clock.now()));
    const wrong = code.slice(0, 5) + ((Number(code[5]) + 1) % 10);
    expect((await app.http.post("/api/v1/auth/totp/verify", { mfa_token: pending, code: wrong })).status).toBeGreaterThanOrEqual(400);
    expect((await app.http.post("/api/v1/auth/totp/verify", { mfa_token: pending, code })).status).toBe(200);
    // An SSH certificate, and a refused one (a principal the member was not granted).
    const org = await newOrg(app, user);
    orgId = org.id;
    member = await newUser(app);
    await addMember(app, org.id, user, member, "member");
    await createCa(app, org.id, user);
    await grantPrincipal(app, org.id, user, member, "deploy");
    const key = await addVerifiedKey(app, member);
    expect((await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: member.token })).status).toBe(201);
    expect((await app.http.post("/api/v1/ssh/sign", { key_id: key.id, principals: ["root"] }, { token: member.token })).status).toBeGreaterThanOrEqual(400);
    // OIDC: a code exchange, and a refresh with a token that does not exist.
    const tokens = await delegatedToken(app, member);
    expect(tokens.raw.status).toBe(200);
    expect((await refreshDelegated(app, "not-a-refresh-token")).status).toBe(400);
    // A path no route knows.
    expect((await app.http.get(`/api/v1/no-such-thing/${user.id}`)).status).toBe(404);
    ({ text, samples } = await scrape());
  });

  const moved = (name: string, labels: Record<string, string> = {}) => total(samples, name, labels) - total(before, name, labels);

  it("counts sign-ins and MFA by result", () => {
    expect(moved("keyward_sign_ins_total", { method: "password", result: "success" })).toBeGreaterThanOrEqual(4);
    expect(moved("keyward_sign_ins_total", { method: "password", result: "invalid_credentials" })).toBe(1);
    expect(moved("keyward_sign_ins_total", { method: "password", result: "mfa_required" })).toBe(1);
    expect(moved("keyward_mfa_verifications_total", { method: "totp", result: "failure" })).toBe(1);
    expect(moved("keyward_mfa_verifications_total", { method: "totp", result: "success" })).toBe(1);
  });

  it("counts certificates and OIDC token outcomes", () => {
    expect(moved("keyward_ssh_certificates_total", { result: "issued" })).toBe(1);
    expect(moved("keyward_ssh_certificates_total", { result: "failed" })).toBe(1);
    const failed = samples.find((s) => s.name === "keyward_ssh_certificates_total" && s.labels.result === "failed");
    expect(failed?.labels.reason).toMatch(/^[A-Z_]+$/);
    expect(moved("keyward_oidc_tokens_total", { grant_type: "authorization_code", result: "issued" })).toBe(1);
    expect(moved("keyward_oidc_tokens_total", { grant_type: "refresh_token", result: "invalid_grant" })).toBe(1);
    expect(moved("keyward_audit_events_total", { action: "ssh.cert.issued", success: "true" })).toBe(1);
  });

  it("times HTTP requests by route template, never by URL", () => {
    const count = "keyward_http_request_duration_seconds_count";
    expect(moved(count, { method: "POST", route: "/api/v1/auth/login", status_class: "2xx" })).toBeGreaterThanOrEqual(4);
    expect(moved(count, { method: "POST", route: "/api/v1/auth/login", status_class: "4xx" })).toBe(1);
    expect(moved(count, { method: "POST", route: "/api/v1/organizations/:orgId/cas", status_class: "2xx" })).toBe(1);
    expect(moved(count, { method: "POST", route: "/api/v1/ssh/sign", status_class: "2xx" })).toBe(1);
    expect(moved(count, { method: "POST", route: "/api/v1/ssh/sign", status_class: "4xx" })).toBe(1);
    expect(moved(count, { method: "POST", route: "/graphql" })).toBe(3);
    expect(moved(count, { method: "POST", route: "/api/v1/oidc/token", status_class: "2xx" })).toBe(1);
    expect(moved(count, { method: "POST", route: "/api/v1/oidc/token", status_class: "4xx" })).toBe(1);
    expect(moved(count, { method: "GET", route: "unmatched", status_class: "4xx" })).toBeGreaterThanOrEqual(1);
    expect(moved("keyward_http_request_duration_seconds_bucket", { route: "/api/v1/auth/login", le: "+Inf" })).toBeGreaterThanOrEqual(5);
  });

  it("counts GraphQL operations by type, root field and outcome", () => {
    const count = "keyward_graphql_operation_duration_seconds_count";
    expect(moved(count, { type: "query", operation: "me", outcome: "success" })).toBe(1);
    expect(moved(count, { type: "query", operation: "me", outcome: "error" })).toBe(1);
    expect(moved(count, { type: "unknown", operation: "unknown", outcome: "invalid" })).toBe(1);
  });

  it("reports the outbox, the database and Redis", () => {
    expect(samples.some((s) => s.name === "keyward_email_outbox_messages" && s.labels.status === "pending")).toBe(true);
    expect(total(samples, "keyward_email_outbox_oldest_pending_age_seconds")).toBeGreaterThanOrEqual(0);
    expect(total(samples, "keyward_database_up", { kind: app.container.database.kind })).toBe(1);
    expect(total(samples, "keyward_database_pool_size")).toBe(app.container.database.kind === "postgres" ? 10 : 1);
    expect(total(samples, "keyward_redis_configured")).toBe(app.container.redis ? 1 : 0);
    if (app.container.redis) {
      expect(total(samples, "keyward_redis_up")).toBe(1);
      expect(total(samples, "keyward_redis_connection_status", { status: "ready" })).toBe(1);
      expect(total(samples, "keyward_database_connections")).toBeGreaterThan(0);
    } else {
      expect(samples.some((s) => s.name === "keyward_redis_up")).toBe(false);
    }
    expect(samples.some((s) => s.name === "process_cpu_user_seconds_total")).toBe(true);
  });

  it("puts no id, token, address or raw URL in any label", () => {
    const labelValues = samples.flatMap((s) => Object.values(s.labels));
    for (const secret of [user.id, member.id, orgId, user.token, member.token, user.email, member.email, TOKEN, "not-a-refresh-token"]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i);
    expect(text).not.toMatch(/kws_|kwk_|@example\.com|no-such-thing/);
    for (const value of labelValues) expect(value).not.toMatch(/[?=&@]/);
    // Routes are templates or fixed words.
    const routes = new Set(samples.filter((s) => s.labels.route !== undefined).map((s) => s.labels.route!));
    for (const route of routes) expect(route).toMatch(/^(unmatched|\/[A-Za-z0-9_.\-/:*]*)$/);
    expect(labelValues.length).toBeGreaterThan(0);
  });
});

describe("who may scrape", () => {
  it("refuses a scrape without the token, or with a wrong one, in the REST envelope", async () => {
    const none = await app.http.get("/metrics");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(none.body).toMatchObject({ version: "1.0", success: false, code: 401, error: { type: "AUTH_REQUIRED" } });
    expect(none.body.request_id).toBeTruthy();
    for (const token of ["wrong", TOKEN.replace(/.$/, "x"), `${TOKEN}x`]) {
      const wrong = await app.http.get("/metrics", { token });
      expect(wrong.status).toBe(401);
      expect(wrong.body.error.type).toBe("INVALID_TOKEN");
      expect(wrong.text).not.toContain("keyward_");
    }
    const basic = await app.http.get("/metrics", { headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` } });
    expect(basic.status).toBe(401);
  });

  it("answers 404 when neither METRICS_TOKEN nor METRICS_PORT is set, and collects nothing", async () => {
    const plain = await startTestApp();
    try {
      expect(plain.container.metrics).toBeUndefined();
      const res = await plain.http.get("/metrics", { token: TOKEN });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, code: 404, error: { type: "NOT_FOUND" } });
    } finally {
      await plain.close();
    }
  });

  it("serves /metrics alone on the separate port, with the token when one is set", async () => {
    const metrics = app.container.metrics!;
    for (const token of [undefined, TOKEN]) {
      const server = createMetricsServer(metrics, { token, timeouts: app.container.config.http.timeouts });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        const anonymous = await fetch(`${base}/metrics`);
        expect(anonymous.status).toBe(token ? 401 : 200);
        const authorized = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(authorized.status).toBe(200);
        expect(await authorized.text()).toContain("keyward_http_request_duration_seconds_count");
        expect((await fetch(`${base}/api/v1/auth/me`)).status).toBe(404);
      } finally {
        server.close();
      }
    }
  });
});

describe("jobs", () => {
  it("counts runs and times them", async () => {
    const stop = startJobs(app.container, app.oidc);
    try {
      await expect.poll(async () => total((await scrape()).samples, "keyward_job_runs_total", { job: "email-outbox", result: "success" }), { timeout: 5000 }).toBeGreaterThan(0);
    } finally {
      stop();
    }
    const { samples } = await scrape();
    expect(total(samples, "keyward_job_duration_seconds_count", { job: "email-outbox" })).toBeGreaterThan(0);
    expect(total(samples, "keyward_job_last_success_timestamp_seconds", { job: "email-outbox" })).toBeGreaterThan(0);
  });
});

describe("the Grafana dashboard and the alert rules", () => {
  it("parse, and query only metrics Keyward exports", async () => {
    const dashboard = readFileSync(new URL("../../docs/grafana-dashboard.json", import.meta.url), "utf8");
    const alerts = readFileSync(new URL("../../docs/prometheus-alerts.yml", import.meta.url), "utf8");
    expect(JSON.parse(dashboard).panels.length).toBeGreaterThan(10);
    const rules = (parseYaml(alerts) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }).groups[0]!.rules;
    expect(rules.map((r) => r.alert)).toEqual(expect.arrayContaining(["KeywardDown", "HighErrorRate", "SlowRequests", "SignInFailuresSpike", "OutboxBacklog", "JobNotRunning", "CertificateSigningErrors"]));
    const { text } = await scrape();
    const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
    // Redis series exist only with Redis; the embedded default has none.
    if (!app.container.redis) for (const name of ["keyward_redis_up", "keyward_redis_ping_seconds", "keyward_redis_connection_status"]) exported.add(name);
    const queried = new Set([...`${dashboard}\n${rules.map((r) => r.expr).join("\n")}`.matchAll(/\b((?:keyward|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!.replace(/_(bucket|count|sum)$/, "")));
    expect(queried.size).toBeGreaterThan(10);
    for (const name of queried) expect(exported, name).toContain(name);
  });
});

describe("rate limits", () => {
  it("counts refusals by limit, and refused password sign-ins as sign-ins", async () => {
    const limited = await startTestApp({ METRICS_TOKEN: TOKEN, RATE_LIMIT_LOGIN_IP: "2/3600" });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await login(limited, "nobody@example.com", "not the password at all")).status);
      expect(statuses).toEqual([401, 401, 429]);
      const samples = parse((await limited.http.get("/metrics", { token: TOKEN })).text);
      expect(total(samples, "keyward_rate_limited_total", { limit: "login-ip" })).toBe(1);
      expect(total(samples, "keyward_sign_ins_total", { method: "password", result: "rate_limited" })).toBe(1);
      expect(total(samples, "keyward_sign_ins_total", { method: "password", result: "invalid_credentials" })).toBe(2);
    } finally {
      await limited.close();
    }
  });
});
