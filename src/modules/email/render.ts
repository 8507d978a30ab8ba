import { readFile } from "node:fs/promises";
import { projectPath } from "../../infra/paths.js";
import type { TemplateName } from "./templates.js";

/**
 * MJML (with its HTML minifier, CSS inliner and parser) is most of the service's loaded code:
 * about 40 MB resident (measured at idle) for a process that has not sent an email yet. It loads with the first one.
 */
let mjml: Promise<typeof import("mjml")> | undefined;
const loadMjml = () => (mjml ??= import("mjml").then((m) => m.default));

export interface Brand {
  name: string;
  logoUrl?: string;
  supportEmail: string;
  publicUrl: string;
}

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}

export class TemplateError extends Error {
  override name = "TemplateError";
}

const escapeHtml = (v: string) =>
  v.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

/** `{{x}}` is escaped, `{{{x}}}` is inserted as is (only for markup we built). A missing variable throws. */
function fill(template: string, vars: Record<string, unknown>, escape: (v: string) => string, file: string): string {
  return template.replace(/\{\{(\{?)\s*([\w.]+)\s*\}?\}\}/g, (_, raw: string, key: string) => {
    const value = vars[key];
    if (value === undefined || value === null) throw new TemplateError(`${file}: variable "${key}" is missing`);
    return raw ? String(value) : escape(String(value));
  });
}

/** Renders MJML email templates from emails/ into subject, HTML and plain text. */
export class EmailRenderer {
  private readonly cache = new Map<string, string>();

  constructor(
    private readonly brand: Brand,
    private readonly dir = projectPath("emails"),
  ) {}

  private async source(file: string): Promise<string> {
    let text = this.cache.get(file);
    if (text === undefined) {
      text = await readFile(`${this.dir}/${file}`, "utf8");
      this.cache.set(file, text);
    }
    return text;
  }

  async render(template: TemplateName, props: object): Promise<RenderedEmail> {
    const vars: Record<string, unknown> = {
      brandName: this.brand.name,
      supportEmail: this.brand.supportEmail,
      publicUrl: this.brand.publicUrl,
      ...props,
    };
    const [textSource, bodySource, layout] = await Promise.all([
      this.source(`${template}.txt`),
      this.source(`${template}.mjml`),
      this.source("layout.mjml"),
    ]);
    const text = fill(textSource, vars, (v) => v, `${template}.txt`);
    const match = /^Subject: (.*)\n\n/.exec(text);
    if (!match) throw new TemplateError(`${template}.txt must start with a "Subject:" line and a blank line`);
    const subject = match[1]!.trim();
    const body = fill(bodySource, vars, escapeHtml, `${template}.mjml`);
    const logo = this.brand.logoUrl
      ? `<mj-image src="${escapeHtml(this.brand.logoUrl)}" alt="${escapeHtml(this.brand.name)}" width="120px" />`
      : "";
    const document = fill(layout, { ...vars, subject, preview: subject, body, logo }, escapeHtml, "layout.mjml");
    const result = await (await loadMjml())(document, { validationLevel: "strict" });
    return { subject, html: result.html, text: text.slice(match[0].length) };
  }
}
