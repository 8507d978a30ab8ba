import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { knownHostsField } from "../../src/modules/ssh-ca/host-patterns.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { orgWithRoles } from "../factories/orgs.js";
import { createCa } from "../factories/ssh.js";

/**
 * Host patterns per host CA: which hosts its `@cert-authority` line vouches for (known_hosts) and
 * which hosts `keyward ssh config` sends through the organization's certificate. Set by admins
 * (REST and GraphQL), validated, audited; members read them for their own organizations only.
 */
let app: TestApp;
let a: Awaited<ReturnType<typeof orgWithRoles>>;
let b: Awaited<ReturnType<typeof orgWithRoles>>;
let hostCa: { id: string; public_key: string };
let userCa: { id: string };
const path = () => `/api/v1/organizations/${a.org.id}/cas/${hostCa.id}`;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  a = await orgWithRoles(app);
  b = await orgWithRoles(app);
  userCa = await createCa(app, a.org.id, a.owner);
  hostCa = await createCa(app, a.org.id, a.owner, { name: "Hosts", ca_type: "host" });
});
afterAll(() => app?.close());

describe("host patterns of a host CA", () => {
  it("are unset at first: known_hosts keeps the historical *", async () => {
    const cfg = (await app.http.get(`/api/v1/organizations/${a.org.id}/ssh/ca-keys`, { token: a.member.token })).body.data;
    expect(cfg.known_hosts).toBe(`@cert-authority * ${hostCa.public_key}\n`);
  });

  it("refuse empty, spaced, comma-joined, injected and match-everything patterns with a 400 VALIDATION_ERROR", async () => {
    const bad: unknown[] = [[], [""], ["  "], ["a.example.com b"], ["a.example.com,*"], ["web\n@cert-authority *"], ["*"], ["*.*"], ["!*.example.com"], ["!*", "a.example.com"], ["x".repeat(254)], "*.example.com", [42], Array.from({ length: 65 }, (_, i) => `h${i}.example.com`)];
    for (const hostPatterns of bad) {
      const res = await app.http.patch(path(), { host_patterns: hostPatterns }, { token: a.admin.token });
      expect(res.status, JSON.stringify(hostPatterns)).toBe(400);
      expect(res.body.error.type, JSON.stringify(hostPatterns)).toBe("VALIDATION_ERROR");
    }
    // Nothing was stored by any of them.
    expect((await app.http.get(`/api/v1/organizations/${a.org.id}/cas`, { token: a.admin.token })).body.data.cas.find((c: { id: string }) => c.id === hostCa.id).host_patterns).toBeNull();
  });

  it("are set by an admin, deduplicated, audited with both sides, and used in known_hosts (with the [host]:port twin)", async () => {
    const res = await app.http.patch(path(), { host_patterns: ["*.prod.example.com", "10.0.0.*", "*.prod.example.com", "!db.prod.example.com"] }, { token: a.admin.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.ca.host_patterns).toEqual(["*.prod.example.com", "10.0.0.*", "!db.prod.example.com"]);
    const cfg = (await app.http.get(`/api/v1/organizations/${a.org.id}/ssh/ca-keys`, { token: a.member.token })).body.data;
    expect(cfg.known_hosts).toBe(`@cert-authority *.prod.example.com,[*.prod.example.com]:*,10.0.0.*,[10.0.0.*]:*,!db.prod.example.com,![db.prod.example.com]:* ${hostCa.public_key}\n`);
    const [audit] = resultRows<{ metadata: { host_patterns: { from: unknown; to: unknown } } }>(
      await app.container.database.db.execute(sql`select metadata from audit_logs where organization_id = ${a.org.id} and action = 'ca.updated' and resource_id = ${hostCa.id} order by created_at desc limit 1`),
    );
    expect(audit!.metadata.host_patterns).toEqual({ from: null, to: ["*.prod.example.com", "10.0.0.*", "!db.prod.example.com"] });
  });

  it("take * only when allow_any_host says so, and null clears them", async () => {
    const any = await app.http.patch(path(), { host_patterns: ["*"], allow_any_host: true }, { token: a.admin.token });
    expect(any.status, any.text).toBe(200);
    expect(any.body.data.ca.host_patterns).toEqual(["*"]);
    expect(knownHostsField(["*"])).toBe("*");
    const cleared = await app.http.patch(path(), { host_patterns: null }, { token: a.admin.token });
    expect(cleared.body.data.ca.host_patterns).toBeNull();
    // allow_any_host alone changes nothing, and says so.
    expect((await app.http.patch(path(), { allow_any_host: true }, { token: a.admin.token })).status).toBe(400);
  });

  it("belong to host CAs only; members and other organizations' admins cannot set them", async () => {
    const onUser = await app.http.patch(`/api/v1/organizations/${a.org.id}/cas/${userCa.id}`, { host_patterns: ["*.example.com"] }, { token: a.admin.token });
    expect(onUser.status).toBe(400);
    expect(onUser.body.message).toContain("host CA");
    const created = await app.http.post(`/api/v1/organizations/${b.org.id}/cas`, { name: "Users", host_patterns: ["*.example.com"] }, { token: b.owner.token });
    expect(created.status).toBe(400);
    expect((await app.http.patch(path(), { host_patterns: ["*.example.com"] }, { token: a.member.token })).status).toBe(403);
    expect((await app.http.patch(path(), { host_patterns: ["*.example.com"] }, { token: b.admin.token })).status).toBe(404);
    expect((await app.http.patch(`/api/v1/organizations/${b.org.id}/cas/${hostCa.id}`, { host_patterns: ["*.example.com"] }, { token: b.owner.token })).status).toBe(404);
  });

  it("can be given at creation, and through GraphQL", async () => {
    const created = await app.http.post(`/api/v1/organizations/${b.org.id}/cas`, { name: "B hosts", ca_type: "host", host_patterns: ["*.b.example.com"] }, { token: b.owner.token });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.ca.host_patterns).toEqual(["*.b.example.com"]);
    const mutation = "mutation($o: ID!, $c: ID!, $p: [String!]) { updateCertificateAuthority(orgId: $o, caId: $c, input: { hostPatterns: $p }) { hostPatterns } }";
    const ok = await app.http.gql(mutation, { o: b.org.id, c: created.body.data.ca.id, p: ["*.b.example.com", "192.168.1.?"] }, { token: b.admin.token });
    expect(ok.errors).toBeUndefined();
    expect(ok.data.updateCertificateAuthority.hostPatterns).toEqual(["*.b.example.com", "192.168.1.?"]);
    const bad = await app.http.gql(mutation, { o: b.org.id, c: created.body.data.ca.id, p: ["a b"] }, { token: b.admin.token });
    expect(bad.errors[0].extensions.code).toBe("VALIDATION_ERROR");
  });
});

describe("GET /ssh/client-config", () => {
  it("lists only the caller's organizations, with their host CA's patterns and known_hosts lines", async () => {
    await app.http.patch(path(), { host_patterns: ["*.prod.example.com"] }, { token: a.admin.token });
    const res = await app.http.get("/api/v1/ssh/client-config", { token: a.member.token });
    expect(res.status).toBe(200);
    expect(res.body.data.organizations).toEqual([
      {
        id: a.org.id,
        name: a.org.name,
        slug: a.org.slug,
        has_user_ca: true,
        host_ca: { id: hostCa.id, name: "Hosts", host_patterns: ["*.prod.example.com"], known_hosts: [`@cert-authority *.prod.example.com,[*.prod.example.com]:* ${hostCa.public_key}`] },
      },
    ]);
    const gql = await app.http.gql("{ mySshClientConfig { organizations { id hasUserCa hostCa { hostPatterns } } } }", {}, { token: b.member.token });
    expect(gql.data.mySshClientConfig.organizations).toEqual([{ id: b.org.id, hasUserCa: false, hostCa: { hostPatterns: ["*.b.example.com", "192.168.1.?"] } }]);
    expect((await app.http.get("/api/v1/ssh/client-config")).status).toBe(401);
  });

  it("answers 20 parallel callers each with their own organizations", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => app.http.get("/api/v1/ssh/client-config", { token: (i % 2 ? a.member : b.member).token })));
    answers.forEach((r, i) => expect(r.body.data.organizations.map((o: { id: string }) => o.id)).toEqual([(i % 2 ? a : b).org.id]));
  });
});
