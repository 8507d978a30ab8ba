import { describe, expect, it } from "vitest";
import type { CertRow } from "../../src/modules/ssh-ca/certificates.repository.js";
import type { IssuedCertificate } from "../../src/modules/ssh-ca/issuance.repository.js";
import { issueBatcher } from "../../src/modules/ssh-ca/issue-batcher.js";

/**
 * How signatures reaching their write together are grouped: one statement per organization per
 * turn of the event loop, each request told about its own row only, and a refused statement tried
 * again row by row. The writer here stands in for the statement (the integration tests run the
 * real one); it records what it was asked to write.
 */
const issued = (id: string, organizationId: string, signerId = "signer"): IssuedCertificate =>
  ({ signerId, cert: { id, organizationId }, certAudit: {}, audit: {} }) as unknown as IssuedCertificate;
const row = (i: IssuedCertificate) => ({ id: i.cert.id, organizationId: i.cert.organizationId }) as CertRow;

describe("issueBatcher", () => {
  it("writes what arrives in one turn as one statement per organization, and answers each with its own row", async () => {
    const calls: string[][] = [];
    const write = issueBatcher(async (batch) => {
      calls.push(batch.map((b) => b.cert.id));
      return batch.map(row);
    });
    const answers = await Promise.all([write(issued("a1", "A")), write(issued("b1", "B")), write(issued("a2", "A"))]);
    expect(answers.map((a) => a?.id)).toEqual(["a1", "b1", "a2"]);
    expect(calls.sort()).toEqual([["a1", "a2"], ["b1"]]);
    // A later turn is a new statement.
    await write(issued("a3", "A"));
    expect(calls).toHaveLength(3);
  });

  it("answers undefined for a signature the statement left out (its signer was offboarded), and the row to the others", async () => {
    const write = issueBatcher(async (batch) => batch.filter((b) => b.signerId !== "gone").map(row));
    const [kept, left] = await Promise.all([write(issued("k", "A")), write(issued("l", "A", "gone"))]);
    expect(kept?.id).toBe("k");
    expect(left).toBeUndefined();
  });

  it("tries a refused statement again one signature at a time, so only the bad row's request fails", async () => {
    const calls: number[] = [];
    const write = issueBatcher(async (batch) => {
      calls.push(batch.length);
      if (batch.some((b) => b.cert.id === "bad")) throw Object.assign(new Error("check violation"), { code: "23514" });
      return batch.map(row);
    });
    const answers = await Promise.allSettled([write(issued("ok1", "A")), write(issued("bad", "A")), write(issued("ok2", "A"))]);
    expect(answers.map((a) => a.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(calls).toEqual([3, 1, 1, 1]);
  });

  it("fails every request of a statement lost to an outage, without trying again", async () => {
    let calls = 0;
    const write = issueBatcher(async () => {
      calls++;
      throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    });
    const answers = await Promise.allSettled([write(issued("x", "A")), write(issued("y", "A"))]);
    expect(answers.map((a) => a.status)).toEqual(["rejected", "rejected"]);
    expect(calls).toBe(1);
  });

  it("writes at once when an organization's batch is full", async () => {
    const sizes: number[] = [];
    const write = issueBatcher(async (batch) => {
      sizes.push(batch.length);
      return batch.map(row);
    });
    await Promise.all(Array.from({ length: 70 }, (_, i) => write(issued(`c${i}`, "A"))));
    expect(sizes).toEqual([64, 6]);
  });
});
