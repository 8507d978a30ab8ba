import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { createCa } from "../../factories/ssh.js";
import { newOrg } from "../../factories/orgs.js";
import { newUser } from "../../factories/users.js";

/**
 * Issue 12 item 5: CA key generation is real CPU, so it is limited per organization, and what a CA
 * publishes for servers to trust stays bounded however often it rotates.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_CA_KEYGEN: "4/3600", SSH_CA_MAX_PREVIOUS_KEYS: "2" });
});
afterAll(() => app?.close());

const gqlRotate = (token: string, orgId: string, caId: string) =>
  app.http.gql("mutation($o: ID!, $c: ID!) { rotateCertificateAuthority(orgId: $o, caId: $c) { oldFingerprint } }", { o: orgId, c: caId }, { token });

describe("CA creations and rotations", () => {
  it("are limited per organization in both doors, and another organization is not affected", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    const ca = await createCa(app, org.id, owner); // 1
    const rotate = () => app.http.post(`/api/v1/organizations/${org.id}/cas/${ca.id}/rotate`, {}, { token: owner.token });
    expect((await rotate()).status).toBe(200); // 2
    expect((await rotate()).status).toBe(200); // 3
    expect((await app.http.post(`/api/v1/organizations/${org.id}/cas`, { name: "Hosts", ca_type: "host" }, { token: owner.token })).status).toBe(201); // 4

    const refused = await rotate();
    expect(refused.status).toBe(429);
    expect(refused.body.error.type).toBe("RATE_LIMIT_EXCEEDED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const viaGql = await gqlRotate(owner.token, org.id, ca.id);
    expect(viaGql.errors?.[0]?.extensions).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", status: 429 });

    // A refused rotation changed nothing.
    const list = await app.http.get(`/api/v1/organizations/${org.id}/cas`, { token: owner.token });
    expect(list.body.data.cas.find((c: { id: string }) => c.id === ca.id).previous_keys).toHaveLength(2);

    const other = await newOrg(app, owner);
    await createCa(app, other.id, owner);
  });

  it("a CA publishes its active key and at most the configured number of retired ones", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    const ca = await createCa(app, org.id, owner);
    const fingerprints = [ca.fingerprint];
    for (let i = 0; i < 3; i++) {
      const r = await app.http.post(`/api/v1/organizations/${org.id}/cas/${ca.id}/rotate`, {}, { token: owner.token });
      expect(r.status).toBe(200);
      fingerprints.push(r.body.data.ca.fingerprint);
    }
    const config = await app.http.get(`/api/v1/organizations/${org.id}/ssh/ca-keys`, { token: owner.token });
    expect(config.body.data.user_ca_keys).toHaveLength(3);
    const list = await app.http.get(`/api/v1/organizations/${org.id}/cas`, { token: owner.token });
    const view = list.body.data.cas.find((c: { id: string }) => c.id === ca.id);
    expect(view.fingerprint).toBe(fingerprints[3]);
    // The two newest retired keys are still trusted; the first key's overlap ended at the third rotation.
    expect(view.previous_keys.map((k: { fingerprint: string }) => k.fingerprint).sort()).toEqual([fingerprints[1], fingerprints[2]].sort());
  });
});
