import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { enrollTotp } from "../../factories/mfa.js";
import { orgWithRoles } from "../../factories/orgs.js";
import { login } from "../../factories/users.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../../factories/ssh.js";

/**
 * An organization the service picks for the caller (no org_id given) passes the same access check
 * as one the caller names: a member past an organization's MFA deadline is refused either way.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

const DAY = 24 * 3600;

describe("MFA compliance on implicitly chosen organizations", () => {
  it("refuses signing, the certificate policy and the CA key without org_id, as with it, in both doors", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    await grantPrincipal(app, org.id, owner, member, "deploy");
    const { id: keyId } = await addVerifiedKey(app, member);
    await enrollTotp(app, owner);
    // Before the deadline, leaving out org_id signs in the member's only organization.
    const before = await app.http.post("/api/v1/ssh/sign", { cert_id: keyId, principals: ["deploy"] }, { token: member.token });
    expect(before.status).toBe(201);

    const policy = await app.http.put(`/api/v1/organizations/${org.id}/security-policy`, { mfa_policy_mode: "required", mfa_grace_period_days: 1 }, { token: owner.token });
    expect(policy.status).toBe(200);
    app.clock.advance(2 * DAY);
    await app.services.mfaPolicy.runCompliance();
    // Two days on, the member signs in again (sessions idle out).
    const token = (await login(app, member.email)).body.data.token as string;

    const refusals = {
      signWithout: await app.http.post("/api/v1/ssh/sign", { cert_id: keyId, principals: ["deploy"] }, { token }),
      signWith: await app.http.post("/api/v1/ssh/sign", { cert_id: keyId, principals: ["deploy"], org_id: org.id }, { token }),
      policyWithout: await app.http.get("/api/v1/ssh/dept-cert-policy", { token }),
      caKeyWithout: await app.http.get("/api/v1/ssh/ca/public-key", { token }),
    };
    for (const [name, res] of Object.entries(refusals)) expect([name, res.status, res.body.error?.type]).toEqual([name, 403, "MFA_COMPLIANCE_REQUIRED"]);

    const gql = async (query: string) => (await app.http.gql(query, { k: keyId }, { token })).errors?.[0]?.extensions.code;
    expect(await gql('mutation($k: ID!) { signUserCertificate(input: { keyId: $k, principals: ["deploy"] }) { id } }')).toBe("MFA_COMPLIANCE_REQUIRED");
    expect(await gql("query { myCertPolicy { maxExpiryHours } }")).toBe("MFA_COMPLIANCE_REQUIRED");
    expect(await gql("query { caPublicKey { publicKey } }")).toBe("MFA_COMPLIANCE_REQUIRED");
  });
});
