import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { orgWithRoles, newOrg } from "../../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal, malformedKeys } from "../../factories/ssh.js";
import { newUser } from "../../factories/users.js";

/** Issue 12 item 14: keys that parse but cannot be sound are refused at registration and at signing. */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const bad = Object.entries(malformedKeys());

describe("registration", () => {
  it("REST and GraphQL refuse every malformed key with a 400 and store nothing", async () => {
    const user = await newUser(app);
    for (const [name, line] of bad) {
      const rest = await app.http.post("/api/v1/ssh/keys", { key: line }, { token: user.token });
      expect(rest.status, name).toBe(400);
      expect(rest.body.error.type, name).toBe("SSH_KEY_ERROR");
      const gql = await app.http.gql("mutation($k: String!) { addSshKey(publicKey: $k) { isNew } }", { k: line }, { token: user.token });
      expect(gql.errors?.[0]?.extensions, name).toMatchObject({ code: "SSH_KEY_ERROR", status: 400 });
    }
    expect((await app.http.get("/api/v1/ssh/keys", { token: user.token })).body.data.keys).toHaveLength(0);
  });
});

describe("signing", () => {
  it("refuses a malformed key stored before these checks existed, in both doors", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    await grantPrincipal(app, org.id, owner, member, "app");
    const key = await addVerifiedKey(app, member);
    // As if it had been registered by an earlier version.
    await app.container.db.execute(sql`update ssh_keys set public_key = ${bad.find(([n]) => n === "Ed25519 with trailing data")![1]} where id = ${key.id}`);
    const rest = await app.http.post("/api/v1/ssh/sign", { key_id: key.id, org_id: org.id }, { token: member.token });
    expect(rest.status).toBe(400);
    expect(rest.body.error.type).toBe("SSH_KEY_ERROR");
    const gql = await app.http.gql("mutation($k: ID!, $o: ID) { signUserCertificate(input: { keyId: $k, orgId: $o }) { serial } }", { k: key.id, o: org.id }, { token: member.token });
    expect(gql.errors?.[0]?.extensions).toMatchObject({ code: "SSH_KEY_ERROR", status: 400 });
  });

  it("refuses malformed host keys", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    await createCa(app, org.id, owner, { name: "Hosts", ca_type: "host" });
    for (const [name, line] of bad) {
      const r = await app.http.post("/api/v1/ssh/sign/host", { host_public_key: line, principals: ["web1.example.com"], org_id: org.id }, { token: owner.token });
      expect(r.status, name).toBe(400);
    }
  });
});
