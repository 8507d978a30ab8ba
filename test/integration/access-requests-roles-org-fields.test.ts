import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { orgWithRoles } from "../factories/orgs.js";
import type { TestUser } from "../factories/users.js";

/**
 * The caller's standing in each organization, as the web app and scripts read it (issue 37): the
 * effective `role`, the `storedRole` kept on the membership and `elevatedUntil` (null when not
 * elevated), the same on GraphQL (myOrganizations, organization) and REST (/organizations,
 * /users/me/organizations), during a role grant and after it ends by itself.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());
afterEach(() => app.clock.reset());

type World = Awaited<ReturnType<typeof orgWithRoles>> & { base: string };

async function world(): Promise<World> {
  const w = await orgWithRoles(app);
  const base = `/api/v1/organizations/${w.org.id}`;
  const set = await app.http.request("PUT", `${base}/roles/admin/access-policy`, { token: w.owner.token, body: { max_duration_minutes: 240 } });
  expect(set.status, set.text).toBe(200);
  return { ...w, base };
}

/** The member elevated to admin for `minutes`: the grant's end, as the API gives it. */
async function elevate(w: World, minutes: number): Promise<string> {
  const asked = await app.http.post(`${w.base}/access-requests`, { role: "admin", duration_minutes: minutes, reason: "INC-12" }, { token: w.member.token });
  expect(asked.status, asked.text).toBe(201);
  const approved = await app.http.post(`${w.base}/access-requests/${asked.body.data.access_request.id}/approve`, {}, { token: w.owner.token });
  expect(approved.status, approved.text).toBe(200);
  return approved.body.data.access_request.grant_ends_at as string;
}

type Standing = { role: string; storedRole: string; elevatedUntil: string | null };

async function viaGraphql(w: World, who: TestUser): Promise<{ list: Standing | undefined; one: Standing }> {
  const r = await app.http.gql(
    `query($o: ID!) { myOrganizations { id role storedRole elevatedUntil } organization(orgId: $o) { role storedRole elevatedUntil } }`,
    { o: w.org.id },
    { token: who.token },
  );
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  const { id: _id, ...list } = r.data.myOrganizations.find((o: { id: string }) => o.id === w.org.id);
  return { list, one: r.data.organization };
}

async function viaRest(w: World, who: TestUser): Promise<Standing[]> {
  const out: Standing[] = [];
  for (const path of ["/api/v1/organizations", "/api/v1/users/me/organizations"]) {
    const r = await app.http.get(path, { token: who.token });
    expect(r.status, r.text).toBe(200);
    const o = r.body.data.organizations.find((x: { id: string }) => x.id === w.org.id);
    out.push({ role: o.role, storedRole: o.stored_role, elevatedUntil: o.elevated_until });
  }
  return out;
}

describe("the caller's stored role and elevation on their organizations", () => {
  it("shows the grant's end while elevated, and the stored role alone once it ends", async () => {
    const w = await world();
    const plain = { role: "member", storedRole: "member", elevatedUntil: null };
    expect(await viaGraphql(w, w.member)).toEqual({ list: plain, one: plain });
    expect(await viaRest(w, w.member)).toEqual([plain, plain]);

    const until = await elevate(w, 60);
    const during = { role: "admin", storedRole: "member", elevatedUntil: until };
    expect(await viaGraphql(w, w.member)).toEqual({ list: during, one: during });
    expect(await viaRest(w, w.member)).toEqual([during, during]);
    // Lasting roles are never "elevated".
    const owner = { role: "owner", storedRole: "owner", elevatedUntil: null };
    expect((await viaGraphql(w, w.owner)).list).toEqual(owner);
    expect((await viaGraphql(w, w.admin)).list).toEqual({ role: "admin", storedRole: "admin", elevatedUntil: null });

    // The grant's end: the next read has the stored role again, and no end.
    app.clock.advance(61 * 60);
    expect(await viaGraphql(w, w.member)).toEqual({ list: plain, one: plain });
    expect(await viaRest(w, w.member)).toEqual([plain, plain]);
  });

  it("a new organization's creator is its owner for good", async () => {
    const w = await world();
    const made = await app.http.gql(`mutation { createOrganization(input: { name: "Elevation Labs" }) { role storedRole elevatedUntil } }`, {}, { token: w.member.token });
    expect(made.errors, JSON.stringify(made.errors)).toBeUndefined();
    expect(made.data.createOrganization).toEqual({ role: "owner", storedRole: "owner", elevatedUntil: null });
  });
});
