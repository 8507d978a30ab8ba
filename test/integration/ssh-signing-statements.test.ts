import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { statementCounter } from "../helpers/statements.js";
import { orgWithRoles } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../factories/ssh.js";

/**
 * A user certificate costs two statements (issue 38): the signing context (serial, key,
 * memberships, CA, policies, principals, whether a grant may be in force) and the write of the
 * certificate with its audit rows. The fewest of three runs: a job on a clock beside the request
 * only ever adds a statement to one of them.
 */
let app: TestApp;
const counter = statementCounter();
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" }, { onStatement: counter.onStatement });
});
afterAll(() => app?.close());

describe("signing's statements", () => {
  it("signs a user certificate with two statements when no grant is in force", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    await grantPrincipal(app, org.id, owner, member, "app");
    const key = await addVerifiedKey(app, member);
    const sign = async () => {
      const res = await app.http.post("/api/v1/ssh/sign", { key_id: key.id, principals: ["app"] }, { token: member.token });
      expect(res.status, res.text).toBe(201);
    };
    const fewest = (await counter.fewest(sign, 3)).sql;
    expect(fewest.length, fewest.join("\n---\n")).toBe(2);
  });
});
