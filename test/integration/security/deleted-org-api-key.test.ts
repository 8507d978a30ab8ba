import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { orgWithRoles } from "../../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../../factories/ssh.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

describe("an organization's API key dies with the organization", () => {
  it("answers the sudo check until the organization is deleted, then 401 like any invalid key", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    await grantPrincipal(app, org.id, owner, member, "app");
    const apiKey = (await app.http.post(`/api/v1/organizations/${org.id}/api-keys`, { name: "bastion" }, { token: owner.token })).body.data.api_key.key;
    const key = await addVerifiedKey(app, member);
    const cert = (await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: member.token })).body.data;
    expect((await app.http.post("/api/v1/sudo/check", { api_key: apiKey, certificate_serial: cert.serial })).status).toBe(200);

    expect((await app.http.request("DELETE", `/api/v1/organizations/${org.id}`, { token: owner.token, body: { confirm: true } })).status).toBe(200);
    const after = await app.http.post("/api/v1/sudo/check", { api_key: apiKey, certificate_serial: cert.serial });
    expect(after.status).toBe(401);
    expect(after.body.error.type).toBe("UNAUTHORIZED");
  });
});
