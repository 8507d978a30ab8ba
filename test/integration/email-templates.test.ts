import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEMPLATE_NAMES, type TemplateProps } from "../../src/modules/email/templates.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { uniqueEmail } from "../factories/users.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ BRAND_NAME: "Acme ID", BRAND_LOGO_URL: "https://cdn.example.com/logo.png", SUPPORT_EMAIL: "help@acme.test" });
});
afterAll(() => app?.close());

const SAMPLE: TemplateProps = {
  "verify-email": { name: "Vera", email: "vera@example.com", verifyUrl: "https://id.example.com/verify-email?token=v1", expiresInHours: 24 },
  "reset-password": { name: "Rita", resetUrl: "https://id.example.com/reset-password?token=r1", expiresInHours: 2 },
  "sso-link-confirm": { name: "Sara", email: "sara@example.com", connectionName: "Acme IdP", confirmUrl: "https://id.example.com/sso/link/confirm?token=s1", expiresInMinutes: 15 },
  "email-change": { name: "Ella", email: "ella.new@example.com", verifyUrl: "https://id.example.com/verify-email?token=c1", expiresInHours: 24 },
  "email-changed": { name: "Ella", oldEmail: "ella@example.com", newEmail: "ella.new@example.com" },
  "account-exists": { name: "Eve", email: "eve@example.com", resetUrl: "https://id.example.com/forgot-password" },
  "org-invite": { email: "ian@example.com", inviterName: "Olga Owner", organizationName: "Acme Corp", role: "admin", acceptUrl: "https://id.example.com/invite?token=i1", expiresInDays: 7 },
  "invite-accepted": { inviterName: "Olga Owner", memberName: "Nina New", memberEmail: "nina@example.com", organizationName: "Acme Corp", role: "member" },
  "account-activation": { name: "Abe", email: "abe@example.com", inviterName: "Olga Owner", organizationName: "Acme Corp", activateUrl: "https://id.example.com/activate?code=a1", expiresInHours: 72, managedNotice: "Your account will be managed by Acme." },
  "account-suspended": { name: "Sam", email: "sam@example.com", reason: "Contract ended" },
  "mfa-deadline-reminder": { name: "Mia", organizationName: "Acme Corp", deadline: "1 December 2026", daysLeft: 7, enrollUrl: "https://id.example.com/mfa" },
  "contact-notification": { name: "Carl", email: "carl@example.com", subject: "Pricing", message: "How much &amp; when?", submittedAt: "2026-11-22T10:00:00.000Z" },
  "mfa-removed": { name: "Mo", adminEmail: "root@acme.test", removed: "the authenticator app" },
  "network-access-request": {
    managerName: "Mira Manager",
    requesterName: "Ravi",
    requesterEmail: "ravi@example.com",
    networkName: "prod-vpn",
    organizationName: "Acme Corp",
    justification: "On call this week",
    reviewUrl: "https://id.example.com/networks/requests",
  },
  "network-access-decision": { name: "Ravi", networkName: "prod-vpn", organizationName: "Acme Corp", decision: "approved", reason: "Approved for on-call.", accessUrl: "https://id.example.com/network-access" },
  "access-request": { approverName: "Mira", requesterEmail: "ravi@example.com", principal: "deploy", what: "the principal deploy", minutes: 120, organizationName: "Acme Corp", reason: "Release 4.2", reviewUrl: "https://id.example.com/app/orgs/acme" },
  "access-request-decision": { name: "Ravi", principal: "deploy", what: "the principal deploy", organizationName: "Acme Corp", decision: "rejected", reason: "Reason: not this week" },
};

const SUBJECTS: Record<keyof TemplateProps, string> = {
  "verify-email": "Verify your Acme ID email address",
  "reset-password": "Reset your Acme ID password",
  "sso-link-confirm": "Confirm linking your Acme ID account to Acme IdP",
  "email-change": "Confirm your new Acme ID email address",
  "email-changed": "Your Acme ID email address was changed",
  "account-exists": "Sign-up attempt with your Acme ID address",
  "org-invite": "You're invited to join Acme Corp on Acme ID",
  "invite-accepted": "Nina New joined Acme Corp",
  "account-activation": "Activate your Acme ID account",
  "account-suspended": "Your Acme ID account was suspended",
  "mfa-deadline-reminder": "Action required: set up multi-factor authentication for Acme Corp within 7 days",
  "contact-notification": "Contact form: Pricing",
  "mfa-removed": "Multi-factor authentication was removed from your Acme ID account",
  "network-access-request": "Ravi asks for access to prod-vpn",
  "network-access-decision": "Your access to prod-vpn was approved",
  "access-request": "ravi@example.com asks for deploy for 120 minutes",
  "access-request-decision": "Your request for deploy was rejected",
};

describe("every template over real SMTP", () => {
  it.each(TEMPLATE_NAMES)("%s arrives as multipart HTML + text with its subject, recipient and variables", async (name) => {
    const to = uniqueEmail(name);
    const props = SAMPLE[name];
    await app.container.db.transaction((tx) => app.services.email.enqueue(tx, name, to, props as never));
    await app.flushEmails();
    const mail = app.mail.last(to)!;
    expect(mail.to).toEqual([to]);
    expect(mail.subject).toBe(SUBJECTS[name]);
    expect(mail.parsed.html).toBeTruthy();
    expect(mail.parsed.text).toBeTruthy();
    expect(mail.html).toContain("https://cdn.example.com/logo.png");
    expect(mail.html).toContain("help@acme.test");
    for (const value of Object.values(props)) {
      const shown = String(value).replace(/&/g, "&amp;");
      expect(mail.html.includes(String(value)) || mail.html.includes(shown), `${name}: ${value}`).toBe(true);
    }
  });

  it("the inviter's notice names the member, their email, the organization and the role", async () => {
    const to = uniqueEmail("inviter");
    await app.container.db.transaction((tx) => app.services.email.enqueue(tx, "invite-accepted", to, SAMPLE["invite-accepted"]));
    await app.flushEmails();
    const html = app.mail.last(to)!.html;
    for (const fact of ["Nina New", "nina@example.com", "Acme Corp", "member"]) expect(html).toContain(fact);
  });
});
