import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { countRows } from "../helpers/db.js";
import { newSuperadmin, newUser } from "../factories/users.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ CONTACT_NOTIFY_EMAIL: "ops@keyward.test" });
});
afterAll(() => app?.close());

const valid = { name: "Dana", email: "dana@example.com", subject: "Hello", message: "I would like a demo." };

describe("contact form", () => {
  it("stores a sanitised submission and notifies CONTACT_NOTIFY_EMAIL without any script", async () => {
    const res = await app.http.post("/api/v1/contact", {
      name: "Dana <b>Bold</b>",
      email: "dana@example.com",
      subject: "Hi <script>alert('x')</script>there",
      message: "Tom & Jerry <img src=x onerror=alert(1)><script>steal()</script> say hi",
    });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe("Thank you: your message was sent.");
    expect(await countRows(app, "contact_submissions", "message like '%Tom &amp; Jerry%' and message not like '%<%'")).toBe(1);
    await app.flushEmails();
    const mail = app.mail.last("ops@keyward.test")!;
    expect(mail.subject).toBe("Contact form: Hi there");
    expect(mail.html).not.toMatch(/<script|onerror|steal\(\)|alert/);
    expect(mail.html).toContain("Tom &amp; Jerry");
    expect(mail.html).toContain("Dana Bold");
  });

  it("answers a filled honeypot exactly like a real submission, and stores and sends nothing", async () => {
    const before = await countRows(app, "contact_submissions");
    const sentBefore = app.mail.to("ops@keyward.test").length;
    const res = await app.http.post("/api/v1/contact", { ...valid, website: "http://spam.example" });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe("Thank you: your message was sent.");
    await app.flushEmails();
    expect(await countRows(app, "contact_submissions")).toBe(before);
    expect(app.mail.to("ops@keyward.test").length).toBe(sentBefore);
  });

  it("refuses bad input with field errors and writes nothing", async () => {
    const before = await countRows(app, "contact_submissions");
    const res = await app.http.post("/api/v1/contact", { name: "", email: "nope", subject: "x", message: "m".repeat(5001) });
    expect(res.status).toBe(400);
    const paths = res.body.error.details.errors.map((e: { path: string }) => e.path).sort();
    expect(paths).toEqual(["email", "message", "name"]);
    expect(await countRows(app, "contact_submissions")).toBe(before);
  });

  it("allows 5 submissions per hour per client address and refuses the 6th with 429", async () => {
    const limited = await startTestApp();
    try {
      // Windows are aligned to the clock: start at the top of an hour so the whole hour is left.
      limited.clock.advance((3_600_000 - (limited.clock.now().getTime() % 3_600_000)) / 1000);
      for (let i = 0; i < 5; i++) expect((await limited.http.post("/api/v1/contact", valid)).status).toBe(200);
      const sixth = await limited.http.post("/api/v1/contact", valid);
      expect(sixth.status).toBe(429);
      expect(sixth.body.error.type).toBe("RATE_LIMIT_EXCEEDED");
      expect(Number(sixth.headers.get("retry-after"))).toBeGreaterThan(3000);
      const gql = await limited.http.gql("mutation($i: ContactInput!) { submitContact(input: $i) { message } }", { i: valid });
      expect(gql.errors[0].extensions.code).toBe("RATE_LIMIT_EXCEEDED");
    } finally {
      await limited.close();
    }
  });
});

describe("outbox administration", () => {
  it("lets superadmins list outbox state and retry a dead message, and nobody else", async () => {
    const to = "dead-letter@example.com";
    app.mail.reject(to, 421);
    await app.container.db.transaction((tx) => app.services.email.enqueue(tx, "reset-password", to, { name: "x", resetUrl: "https://x.test", expiresInHours: 2 }));
    for (let i = 0; i < 9; i++) {
      await app.flushEmails();
      app.clock.advance(4 * 3600);
    }
    // Signed in after the clock moved on (sessions would have idled out).
    const admin = await newSuperadmin(app);
    const plain = await newUser(app);
    const dead = await app.http.get("/api/v1/superadmin/emails?status=dead", { token: admin.token });
    const row = dead.body.data.emails.find((e: { to_address: string }) => e.to_address === to);
    expect(row).toMatchObject({ status: "dead", attempts: 8 });
    expect((await app.http.get("/api/v1/superadmin/emails", { token: plain.token })).status).toBe(403);
    app.mail.accept(to);
    const retried = await app.http.gql("mutation($id: ID!) { retryEmail(id: $id) { id } }", { id: row.id }, { token: admin.token });
    expect(retried.data.retryEmail.id).toBe(row.id);
    await app.flushEmails();
    expect(app.mail.to(to)).toHaveLength(1);
    expect((await app.http.post(`/api/v1/superadmin/emails/${row.id}/retry`, {}, { token: admin.token })).status).toBe(404);
  });
});
