import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { countRows } from "../helpers/db.js";
import { orgWithRoles } from "../factories/orgs.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

async function createKey(orgId: string, token: string): Promise<{ id: string; key: string; prefix: string }> {
  const res = await app.http.post(`/api/v1/organizations/${orgId}/api-keys`, { name: "bastion" }, { token });
  expect(res.status).toBe(201);
  return { id: res.body.data.api_key.id, key: res.body.data.api_key.key, prefix: res.body.data.api_key.prefix };
}

describe("API-key authentication (what caller resolution will use)", () => {
  it("authenticate(secret) answers the key's organization, id, prefix and scopes, nothing else, and records the use", async () => {
    const { org, owner } = await orgWithRoles(app);
    const { id, key, prefix } = await createKey(org.id, owner.token);
    expect(await countRows(app, "api_keys", `id = '${id}' and last_used_at is not null`)).toBe(0);

    const caller = await app.services.apiKeys.authenticate(key);
    // Exactly these fields: no hash or row leaves the module. A key made without scopes answers the sudo check.
    expect(caller).toEqual({ keyId: id, organizationId: org.id, prefix, scopes: new Set(["ssh:sudo"]) });
    expect(await countRows(app, "api_keys", `id = '${id}' and last_used_at is not null and last_used_at <= '${app.clock.now().toISOString()}'`)).toBe(1);
  });

  it("answers null for anything but a live key of a live organization", async () => {
    const { org, owner } = await orgWithRoles(app);
    const { id, key } = await createKey(org.id, owner.token);
    // Not shaped like a key, a key-shaped guess, and an absurdly long one: null, nothing touched.
    for (const wrong of ["", "Bearer x", key.slice(4), `${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}`, `${key}${"x".repeat(200)}`]) {
      expect(await app.services.apiKeys.authenticate(wrong)).toBeNull();
    }
    expect(await countRows(app, "api_keys", `id = '${id}' and last_used_at is not null`)).toBe(0);

    expect((await app.http.post(`/api/v1/organizations/${org.id}/api-keys/${id}/revoke`, {}, { token: owner.token })).status).toBe(200);
    expect(await app.services.apiKeys.authenticate(key)).toBeNull();

    const other = await orgWithRoles(app);
    const live = await createKey(other.org.id, other.owner.token);
    expect(await app.services.apiKeys.authenticate(live.key)).not.toBeNull();
    expect((await app.http.request("DELETE", `/api/v1/organizations/${other.org.id}`, { token: other.owner.token, body: { confirm: true } })).status).toBe(200);
    // A key dies with its organization.
    expect(await app.services.apiKeys.authenticate(live.key)).toBeNull();
  });
});
