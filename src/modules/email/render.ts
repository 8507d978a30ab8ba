import { readFile } from "node:fs/promises";
import { projectPath } from "../../infra/paths.js";
import { compileTemplate, readSources, sourcesHash, type CompiledEmails, type CompiledTemplate } from "./compile.js";
import type { TemplateName } from "./templates.js";

/** What `npm run build:emails` writes: every template compiled from MJML (compile.ts). */
export const COMPILED_EMAILS = projectPath("dist", "emails.json");

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

/**
 * Renders the email templates of emails/ into subject, HTML and plain text: the text template
 * filled, and the HTML the build compiled from MJML filled (compile.ts). Templates that changed
 * since the build (or a directory the build did not see) are compiled here, once each.
 */
export class EmailRenderer {
  private readonly cache = new Map<string, string>();
  private compiled?: Promise<(template: TemplateName) => Promise<CompiledTemplate>>;

  constructor(
    private readonly brand: Brand,
    private readonly dir = projectPath("emails"),
    private readonly compiledFile = COMPILED_EMAILS,
  ) {}

  private async source(file: string): Promise<string> {
    let text = this.cache.get(file);
    if (text === undefined) {
      text = await readFile(`${this.dir}/${file}`, "utf8");
      this.cache.set(file, text);
    }
    return text;
  }

  /** The build's compilation when it was made from these very sources, else compiled on demand. */
  private async loadCompiled(): Promise<(template: TemplateName) => Promise<CompiledTemplate>> {
    const sources = await readSources(this.dir);
    const built = await readFile(this.compiledFile, "utf8").then((t) => JSON.parse(t) as CompiledEmails, () => undefined);
    if (built && built.hash === sourcesHash(sources)) return async (template) => built.templates[template]!;
    const own = new Map<TemplateName, Promise<CompiledTemplate>>();
    return (template) => {
      let compiled = own.get(template);
      if (!compiled) {
        compiled = compileTemplate(sources.layout, sources.bodies.get(template)!);
        own.set(template, compiled);
        compiled.catch(() => own.delete(template));
      }
      return compiled;
    };
  }

  async render(template: TemplateName, props: object): Promise<RenderedEmail> {
    const vars: Record<string, unknown> = {
      brandName: this.brand.name,
      supportEmail: this.brand.supportEmail,
      publicUrl: this.brand.publicUrl,
      ...props,
    };
    const text = fill(await this.source(`${template}.txt`), vars, (v) => v, `${template}.txt`);
    const match = /^Subject: (.*)\n\n/.exec(text);
    if (!match) throw new TemplateError(`${template}.txt must start with a "Subject:" line and a blank line`);
    const subject = match[1]!.trim();
    if (!this.compiled) {
      this.compiled = this.loadCompiled();
      this.compiled.catch(() => (this.compiled = undefined));
    }
    const compiled = await (await this.compiled)(template);
    const { logoUrl } = this.brand;
    const all = { ...vars };
    for (const [key, value] of Object.entries({ ...vars, subject, preview: subject, logoUrl })) all[`layout.${key}`] = value;
    const html = fill(logoUrl ? compiled.logo : compiled.plain, all, escapeHtml, `${template}.mjml`);
    return { subject, html, text: text.slice(match[0].length) };
  }
}
