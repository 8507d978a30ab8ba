import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { uniqueEmail } from "../factories/users.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ EMAIL_MAX_ATTEMPTS: "3" });
});
afterAll(() => app?.close());

async function outboxRow(to: string) {
  const rows = resultRows<{ status: string; attempts: number; last_error: string | null; props_sealed: string }>(
    await app.container.db.execute(sql`select status, attempts, last_error, props_sealed from email_outbox where to_address = ${to}`),
  );
  return rows[0]!;
}

const enqueue = (to: string) =>
  app.container.db.transaction((tx) =>
    app.services.email.enqueue(tx, "reset-password", to, { name: "Outbox", resetUrl: "https://x.test/r?token=secret-token", expiresInHours: 2 }),
  );

describe("email outbox", () => {
  it("stores the template props encrypted", async () => {
    const to = uniqueEmail("sealed");
    await enqueue(to);
    const row = await outboxRow(to);
    expect(row.props_sealed).toMatch(/^v1\./);
    expect(row.props_sealed).not.toContain("secret-token");
    await app.flushEmails();
    expect((await outboxRow(to)).status).toBe("sent");
    expect(app.mail.last(to)!.text).toContain("secret-token");
  });

  it("writes nothing when the business transaction rolls back", async () => {
    const to = uniqueEmail("rollback");
    await expect(
      app.container.db.transaction(async (tx) => {
        await app.services.email.enqueue(tx, "reset-password", to, { name: "x", resetUrl: "https://x.test", expiresInHours: 2 });
        throw new Error("business rule failed");
      }),
    ).rejects.toThrow();
    expect(resultRows(await app.container.db.execute(sql`select 1 from email_outbox where to_address = ${to}`))).toHaveLength(0);
  });

  it("retries a transient failure later with back-off, then delivers", async () => {
    const to = uniqueEmail("transient");
    app.mail.reject(to, 451);
    await enqueue(to);
    await app.flushEmails();
    let row = await outboxRow(to);
    expect(row).toMatchObject({ status: "pending", attempts: 1 });
    expect(row.last_error).toContain("451");
    // Not due yet: a second drain right away sends nothing.
    app.mail.accept(to);
    await app.flushEmails();
    expect(app.mail.to(to)).toHaveLength(0);
    app.clock.advance(3600);
    await app.flushEmails();
    row = await outboxRow(to);
    expect(row).toMatchObject({ status: "sent", attempts: 2 });
    expect(app.mail.to(to)).toHaveLength(1);
  });

  it("marks a permanent failure without retrying", async () => {
    const to = uniqueEmail("bounce");
    app.mail.reject(to, 550);
    await enqueue(to);
    await app.flushEmails();
    app.clock.advance(3600 * 24);
    await app.flushEmails();
    expect(await outboxRow(to)).toMatchObject({ status: "failed", attempts: 1 });
  });

  it("parks a message as dead after EMAIL_MAX_ATTEMPTS", async () => {
    const to = uniqueEmail("dead");
    app.mail.reject(to, 421);
    await enqueue(to);
    for (let i = 0; i < 4; i++) {
      await app.flushEmails();
      app.clock.advance(2 * 3600);
    }
    expect(await outboxRow(to)).toMatchObject({ status: "dead", attempts: 3 });
  });

  it("never delivers a message twice when workers drain concurrently", async () => {
    const recipients = Array.from({ length: 12 }, () => uniqueEmail("parallel"));
    for (const to of recipients) await enqueue(to);
    const sent = await Promise.all([app.flushEmails(), app.flushEmails(), app.flushEmails()]);
    expect(sent.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(12);
    for (const to of recipients) expect(app.mail.to(to)).toHaveLength(1);
  });
});
