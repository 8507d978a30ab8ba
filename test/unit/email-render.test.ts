import { mkdtempSync, writeFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EmailRenderer } from "../../src/modules/email/render.js";
import { TEMPLATE_NAMES, type TemplateProps } from "../../src/modules/email/templates.js";
import { projectPath } from "../../src/infra/paths.js";

const brand = { name: "Keyward", supportEmail: "help@example.com", publicUrl: "https://id.example.com" };
const SAMPLE: TemplateProps = {
  "verify-email": { name: "Ada <b>", email: "ada@example.com", verifyUrl: "https://id.example.com/verify-email?token=abc&x=1", expiresInHours: 24 },
  "reset-password": { name: "Ada", resetUrl: "https://id.example.com/reset-password?token=abc", expiresInHours: 2 },
  "sso-link-confirm": { name: "Ada", email: "ada@example.com", connectionName: "Acme IdP", confirmUrl: "https://id.example.com/sso/link/confirm?token=abc", expiresInMinutes: 15 },
  "email-change": { name: "Ada", email: "ada.new@example.com", verifyUrl: "https://id.example.com/verify-email?token=abc", expiresInHours: 24 },
  "email-changed": { name: "Ada", oldEmail: "ada@example.com", newEmail: "ada.new@example.com" },
  "account-exists": { name: "Ada", email: "ada@example.com", resetUrl: "https://id.example.com/forgot-password" },
  "org-invite": { email: "ada@example.com", inviterName: "Bob", organizationName: "Acme", role: "admin", acceptUrl: "https://id.example.com/invite?token=t", expiresInDays: 7 },
  "invite-accepted": { inviterName: "Bob", memberName: "Ada", memberEmail: "ada@example.com", organizationName: "Acme", role: "member" },
  "account-activation": { name: "Ada", email: "ada@example.com", inviterName: "Bob", organizationName: "Acme", activateUrl: "https://id.example.com/activate?code=c", expiresInHours: 72, managedNotice: "Your account will be managed by Acme." },
  "account-suspended": { name: "Ada", email: "ada@example.com", reason: "policy" },
  "mfa-deadline-reminder": { name: "Ada", organizationName: "Acme", deadline: "2026-12-01", daysLeft: 7, enrollUrl: "https://id.example.com/mfa" },
  "contact-notification": { name: "Ada", email: "ada@example.com", subject: "Hello", message: "Tom &amp; Jerry", submittedAt: "2026-11-22T00:00:00Z" },
  "mfa-removed": { name: "Ada", adminEmail: "root@example.com", removed: "all methods" },
  "network-access-request": {
    managerName: "Ada",
    requesterName: "Bob",
    requesterEmail: "bob@example.com",
    networkName: "prod-vpn",
    organizationName: "Acme",
    justification: "On call",
    reviewUrl: "https://id.example.com/network-access",
  },
  "network-access-decision": { name: "Bob", networkName: "prod-vpn", organizationName: "Acme", decision: "approved", reason: "", accessUrl: "https://id.example.com/network-access" },
  "access-request": { approverName: "Ada", requesterEmail: "bob@example.com", principal: "deploy", what: "the principal deploy", minutes: 120, organizationName: "Acme", reason: "Release", reviewUrl: "https://id.example.com/app/orgs/acme" },
  "access-request-decision": { name: "Bob", principal: "deploy", what: "the principal deploy", organizationName: "Acme", decision: "approved until 2026-11-28T12:00:00.000Z", reason: "" },
};

describe("email templates", () => {
  const renderer = new EmailRenderer(brand);

  it.each(TEMPLATE_NAMES)("%s renders HTML, text and a subject", async (name) => {
    const out = await renderer.render(name, SAMPLE[name]);
    expect(out.subject.length).toBeGreaterThan(5);
    expect(out.html).toMatch(/^<!doctype html>/i);
    expect(out.text).not.toContain("{{");
    expect(out.html).not.toContain("{{");
    expect(out.html).toContain("help@example.com");
  });

  it("escapes every variable in HTML", async () => {
    const out = await renderer.render("verify-email", SAMPLE["verify-email"]);
    expect(out.html).toContain("Ada &lt;b&gt;");
    expect(out.html).not.toContain("Ada <b>");
    expect(out.html).toContain("token=abc&amp;x=1");
    expect(out.text).toContain("token=abc&x=1");
  });

  it("fails on a missing variable instead of sending a broken email", async () => {
    await expect(renderer.render("reset-password", { name: "Ada" } as never)).rejects.toThrow(/resetUrl/);
  });

  it("fails when a template has no subject line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kw-emails-"));
    cpSync(projectPath("emails"), dir, { recursive: true });
    writeFileSync(join(dir, "reset-password.txt"), "no subject here {{name}}");
    await expect(new EmailRenderer(brand, dir).render("reset-password", SAMPLE["reset-password"])).rejects.toThrow(/Subject/);
  });
});
