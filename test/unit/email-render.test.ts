import { mkdtempSync, readFileSync, writeFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import mjml from "mjml";
import { compileAll } from "../../src/modules/email/compile.js";
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

/**
 * The renderer fills HTML compiled once per template (by the build, or on demand) instead of
 * running MJML on every email: what it sends must be what MJML makes of the filled template, the
 * way every email was rendered before.
 */
const escapeHtml = (v: string) => v.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
const fillMjml = (source: string, vars: Record<string, unknown>) =>
  source.replace(/\{\{(\{?)\s*([\w.]+)\s*\}?\}\}/g, (_, raw: string, key: string) => (raw ? String(vars[key]) : escapeHtml(String(vars[key]))));

async function mjmlOfFilledTemplate(name: keyof TemplateProps, b: typeof brand & { logoUrl?: string }, subject: string): Promise<string> {
  const vars = { brandName: b.name, supportEmail: b.supportEmail, publicUrl: b.publicUrl, ...SAMPLE[name] };
  const body = fillMjml(readFileSync(projectPath("emails", `${name}.mjml`), "utf8"), vars);
  const logo = b.logoUrl ? `<mj-image src="${escapeHtml(b.logoUrl)}" alt="${escapeHtml(b.name)}" width="120px" />` : "";
  const layout = fillMjml(readFileSync(projectPath("emails", "layout.mjml"), "utf8"), { ...vars, subject, preview: subject, body, logo });
  return (await mjml(layout, { validationLevel: "strict" })).html;
}

describe("compiled templates", () => {
  const odd = { name: `Acme "Id" <Co> & Sons'`, supportEmail: "help+id@example.com", publicUrl: "https://id.example.com/a?b=1&c=<2>" };
  const logoBrand = { ...odd, logoUrl: "https://cdn.example.com/logo.png?size=2&v=\"x\"" };

  it.each(TEMPLATE_NAMES)("%s: the same HTML as MJML on the filled template, with and without a logo", async (name) => {
    for (const b of [odd, logoBrand]) {
      const out = await new EmailRenderer(b).render(name, SAMPLE[name]);
      expect(out.html).toBe(await mjmlOfFilledTemplate(name, b, out.subject));
    }
  });

  it("uses the build's compilation when it was made from the same sources, and compiles changed ones itself", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kw-emails-compiled-"));
    const built = await compileAll(projectPath("emails"));
    // A marker only the build's file holds: seen when the file is used, not when compiled here.
    built.templates["reset-password"]!.plain = built.templates["reset-password"]!.plain.replace("</body>", "<!-- from the build --></body>");
    writeFileSync(join(dir, "emails.json"), JSON.stringify(built));
    const fromBuild = await new EmailRenderer(brand, projectPath("emails"), join(dir, "emails.json")).render("reset-password", SAMPLE["reset-password"]);
    expect(fromBuild.html).toContain("<!-- from the build -->");

    writeFileSync(join(dir, "emails.json"), JSON.stringify({ ...built, hash: "0".repeat(64) }));
    const stale = await new EmailRenderer(brand, projectPath("emails"), join(dir, "emails.json")).render("reset-password", SAMPLE["reset-password"]);
    expect(stale.html).not.toContain("<!-- from the build -->");
    expect(stale.html).toBe(await mjmlOfFilledTemplate("reset-password", brand, stale.subject));

    // A template edited after the build: its new text is what is sent.
    const edited = mkdtempSync(join(tmpdir(), "kw-emails-edited-"));
    cpSync(projectPath("emails"), edited, { recursive: true });
    writeFileSync(join(edited, "reset-password.mjml"), "<mj-text>Edited after the build, {{name}}.</mj-text>");
    const out = await new EmailRenderer(brand, edited, join(dir, "emails.json")).render("reset-password", SAMPLE["reset-password"]);
    expect(out.html).toContain("Edited after the build, Ada.");
  });
});
