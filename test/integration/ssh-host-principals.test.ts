import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { orgWithRoles } from "../factories/orgs.js";
import type { TestUser } from "../factories/users.js";

/**
 * The per-host principals mapping through REST and GraphQL: admins only, their organization only,
 * validated (a login or principal that could break the file is refused), one row per
 * (pattern, login) under 20 parallel writers, audited.
 */
let app: TestApp;
let a: Awaited<ReturnType<typeof orgWithRoles>>;
let b: Awaited<ReturnType<typeof orgWithRoles>>;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  a = await orgWithRoles(app);
  b = await orgWithRoles(app);
});
afterAll(() => app?.close());

const P = (orgId: string) => `/api/v1/organizations/${orgId}/ssh/host-principals`;
const gql = (user: TestUser, query: string, variables: Record<string, unknown>) => app.http.post("/graphql", { query, variables }, { token: user.token });

describe("host principals mapping", () => {
  it("is set, replaced, listed and removed by the organization's admins, audited", async () => {
    const set = await app.http.put(P(a.org.id), { host_pattern: "Web*.Example.com", login: "deploy", principals: ["ops", "deploy", "ops"] }, { token: a.admin.token });
    expect(set.status, set.text).toBe(200);
    const row = set.body.data.host_principals;
    expect(row).toMatchObject({ host_pattern: "web*.example.com", login: "deploy", principals: ["deploy", "ops"] });
    const replaced = await app.http.put(P(a.org.id), { host_pattern: "web*.example.com", login: "deploy", principals: ["release"] }, { token: a.owner.token });
    expect(replaced.body.data.host_principals.id).toBe(row.id);
    const listed = await app.http.get(P(a.org.id), { token: a.admin.token });
    expect(listed.body.data.host_principals.map((r: { principals: string[] }) => r.principals)).toEqual([["release"]]);

    const viaGql = await gql(a.owner, "query($o: ID!) { sshHostPrincipals(orgId: $o) { id hostPattern login principals } }", { o: a.org.id });
    expect(viaGql.body.data.sshHostPrincipals).toEqual([{ id: row.id, hostPattern: "web*.example.com", login: "deploy", principals: ["release"] }]);
    const gqlSet = await gql(a.owner, "mutation($o: ID!, $i: SshHostPrincipalsInput!) { setSshHostPrincipals(orgId: $o, input: $i) { login principals } }", { o: a.org.id, i: { hostPattern: "*", login: "root", principals: ["breakglass"] } });
    expect(gqlSet.body.data.setSshHostPrincipals).toEqual({ login: "root", principals: ["breakglass"] });

    const removed = await app.http.delete(`${P(a.org.id)}/${row.id}`, { token: a.admin.token });
    expect(removed.status).toBe(200);
    expect((await app.http.delete(`${P(a.org.id)}/${row.id}`, { token: a.admin.token })).status).toBe(404);
    const audit = JSON.stringify((await app.http.get(`/api/v1/organizations/${a.org.id}/audit-logs?per_page=100`, { token: a.owner.token })).body);
    expect(audit.includes("ssh.host.principals.set")).toBe(true);
    expect(audit.includes("ssh.host.principals.removed")).toBe(true);
  });

  it("refuses members, outsiders and other organizations' admins; another organization's mapping is not found", async () => {
    const body = { host_pattern: "x.example.com", login: "root", principals: ["ops"] };
    expect((await app.http.put(P(a.org.id), body, { token: a.member.token })).status).toBe(403);
    expect((await app.http.get(P(a.org.id), { token: a.guest.token })).status).toBe(403);
    expect((await app.http.put(P(a.org.id), body, { token: b.owner.token })).status).toBe(404);
    expect((await app.http.put(P(a.org.id), body)).status).toBe(401);
    const own = (await app.http.put(P(b.org.id), body, { token: b.owner.token })).body.data.host_principals;
    expect((await app.http.delete(`${P(a.org.id)}/${own.id}`, { token: a.owner.token })).status).toBe(404);
    const gqlMember = await gql(a.member, "query($o: ID!) { sshHostPrincipals(orgId: $o) { id } }", { o: a.org.id });
    expect(gqlMember.body.errors?.length).toBeGreaterThan(0);
    expect(gqlMember.body.data?.sshHostPrincipals ?? null).toBeNull();
  });

  it("refuses what could break the file or the account name, with a 400", async () => {
    for (const bad of [
      { host_pattern: "web1", login: "../etc", principals: ["ops"] },
      { host_pattern: "web1", login: "Root", principals: ["ops"] },
      { host_pattern: "web1", login: "root", principals: ["ops\nroot"] },
      { host_pattern: "web1", login: "root", principals: ["a b"] },
      { host_pattern: "web1", login: "root", principals: [] },
      { host_pattern: "bad host", login: "root", principals: ["ops"] },
      { login: "root", principals: ["ops"] },
    ]) {
      const res = await app.http.put(P(a.org.id), bad, { token: a.owner.token });
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
    expect((await app.http.delete(`${P(a.org.id)}/not-a-uuid`, { token: a.owner.token })).status).toBe(404);
  });

  it("keeps one row per (pattern, login) under 20 parallel writers", async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => app.http.put(P(a.org.id), { host_pattern: "race.example.com", login: "app", principals: [`p${i}`] }, { token: a.owner.token })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const rows = (await app.http.get(P(a.org.id), { token: a.owner.token })).body.data.host_principals.filter((r: { host_pattern: string }) => r.host_pattern === "race.example.com");
    expect(rows).toHaveLength(1);
  });
});
