import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSecretBox } from "../../src/lib/crypto/index.js";
import { EmailService } from "../../src/modules/email/email.service.js";
import { EmailRenderer } from "../../src/modules/email/render.js";
import { createEmailTransport } from "../../src/modules/email/transports/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startFakeResend, startFakeSendgrid } from "../helpers/fake-providers.js";
import { uniqueEmail } from "../factories/users.js";

const RESEND_KEY = "re_test_1234567890";
const SENDGRID_KEY = "SG.test-key";

/** Another instance's outbox worker: the same database and configuration, its own objects. */
function secondWorker(app: TestApp): EmailService {
  const { config, db, clock, logger } = app.container;
  return new EmailService({
    db,
    clock,
    logger,
    box: createSecretBox(config.crypto.encryptionKeys),
    renderer: new EmailRenderer({ ...config.email.brand, publicUrl: config.http.publicUrl }),
    transport: createEmailTransport(config, logger),
    from: config.email.from,
    maxAttempts: config.email.maxAttempts,
  });
}

const enqueue = (app: TestApp, to: string) =>
  app.container.db.transaction((tx) => app.services.email.enqueue(tx, "reset-password", to, { name: "Provider Test", resetUrl: "https://id.example.com/r?token=t", expiresInHours: 2 }));

describe("Resend", () => {
  let fake: Awaited<ReturnType<typeof startFakeResend>>;
  let app: TestApp;
  beforeAll(async () => {
    fake = await startFakeResend(RESEND_KEY);
    app = await startTestApp({ EMAIL_PROVIDER: "resend", RESEND_API_KEY: RESEND_KEY, RESEND_BASE_URL: fake.url, EMAIL_FROM: "Keyward <no-reply@keyward.test>" });
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it("sends a correctly shaped request with the API key and the outbox id as idempotency key", async () => {
    const to = uniqueEmail("resend");
    await enqueue(app, to);
    expect(await app.flushEmails()).toBe(1);
    const sent = fake.accepted.find((m) => m.body.to.includes(to))!;
    expect(sent.headers.authorization).toBe(`Bearer ${RESEND_KEY}`);
    expect(sent.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent.body).toMatchObject({ from: "Keyward <no-reply@keyward.test>", to: [to], subject: "Reset your Keyward password" });
    expect(sent.body.html).toContain("Provider Test");
    expect(sent.body.text).toContain("https://id.example.com/r?token=t");
  });

  it("loses nothing and sends nothing twice through an outage, with two workers draining", async () => {
    const recipients = Array.from({ length: 6 }, () => uniqueEmail("outage"));
    fake.state.outage = true;
    for (const to of recipients) await enqueue(app, to);
    await app.flushEmails();
    expect(fake.accepted.filter((m) => recipients.includes(m.body.to[0]))).toHaveLength(0);
    app.clock.advance(3600);
    await app.flushEmails();
    fake.state.outage = false;
    app.clock.advance(3 * 3600);
    // A second instance's worker: the same database, its own EmailService.
    const second = secondWorker(app);
    await Promise.all([app.flushEmails(), second.drain(), app.flushEmails(), second.drain()]);
    for (const to of recipients) expect(fake.accepted.filter((m) => m.body.to[0] === to)).toHaveLength(1);
    expect(fake.attempts.filter((m) => recipients.includes(m.body?.to?.[0])).length).toBeGreaterThan(recipients.length);
  });

  it("marks a rejected message failed without retrying it", async () => {
    const bad = await startTestApp({ EMAIL_PROVIDER: "resend", RESEND_API_KEY: RESEND_KEY, RESEND_BASE_URL: fake.url, EMAIL_FROM: "not an address" });
    try {
      const to = uniqueEmail("rejected");
      await enqueue(bad, to);
      await bad.flushEmails();
      bad.clock.advance(24 * 3600);
      await bad.flushEmails();
      expect(fake.attempts.filter((m) => m.body?.to?.[0] === to)).toHaveLength(1);
      const list = await bad.services.outbox.list({ actor: { kind: "user", userId: "x", email: "x", isSuperadmin: true, sessionId: null }, requestId: "t", ip: null, userAgent: null }, { status: "failed" });
      expect(list.items.map((i) => i.toAddress)).toContain(to);
    } finally {
      await bad.close();
    }
  });
});

describe("SendGrid", () => {
  let fake: Awaited<ReturnType<typeof startFakeSendgrid>>;
  let app: TestApp;
  beforeAll(async () => {
    fake = await startFakeSendgrid(SENDGRID_KEY);
    app = await startTestApp({ EMAIL_PROVIDER: "sendgrid", SENDGRID_API_KEY: SENDGRID_KEY, SENDGRID_BASE_URL: fake.url, EMAIL_FROM: "Keyward <no-reply@keyward.test>" });
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it("sends the v3 mail/send shape with the API key and the outbox id in custom_args", async () => {
    const to = uniqueEmail("sendgrid");
    await enqueue(app, to);
    expect(await app.flushEmails()).toBe(1);
    const sent = fake.accepted.find((m) => m.body.personalizations[0].to[0].email === to)!;
    expect(sent.headers.authorization).toBe(`Bearer ${SENDGRID_KEY}`);
    expect(sent.body.from).toEqual({ email: "no-reply@keyward.test", name: "Keyward" });
    expect(sent.body.subject).toBe("Reset your Keyward password");
    expect(sent.body.content.map((c: { type: string }) => c.type)).toEqual(["text/plain", "text/html"]);
    expect(sent.body.custom_args.keyward_outbox_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("delivers each message once after an outage (SendGrid has no idempotency: the outbox guards it)", async () => {
    const to = uniqueEmail("sg-outage");
    fake.state.outage = true;
    await enqueue(app, to);
    await app.flushEmails();
    fake.state.outage = false;
    app.clock.advance(3600);
    await Promise.all([app.flushEmails(), app.flushEmails()]);
    expect(fake.accepted.filter((m) => m.body.personalizations[0].to[0].email === to)).toHaveLength(1);
  });
});
