import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { sha256Hex } from "../../lib/crypto/index.js";
import { TEMPLATE_NAMES, type TemplateName } from "./templates.js";

/**
 * MJML to HTML once per template, not once per email. A template is compiled with its variables
 * left as `{{x}}` placeholders (MJML passes them through as text and attribute values); sending an
 * email then only fills the compiled HTML. The build compiles every template into
 * `dist/emails.json` (`npm run build:emails`, part of `npm install` and `npm run build`), so a
 * running service never loads MJML: with its parser, CSS inliner and minifier it held about 40 MB
 * in the service from the first email on (93 MB in a bare process), memory a process does not give
 * back (a worker thread's stayed resident too after the worker ended). Templates edited after the
 * build are noticed by their hash and compiled in-process. The HTML is MJML's of the filled
 * template (test/unit/email-render.test.ts pins it), except that MJML trimmed whitespace at
 * either end of a value standing at either end of a text block, which HTML collapses anyway.
 */
export interface CompiledTemplate {
  /** The layout around the template, without a logo. */
  plain: string;
  /** The same with the brand's logo (`{{layout.logoUrl}}`, `{{layout.brandName}}`) above the name. */
  logo: string;
}

export interface CompiledEmails {
  /** sha256 of the MJML sources and the MJML version they were compiled with. */
  hash: string;
  templates: Record<string, CompiledTemplate>;
}

const LOGO = '<mj-image src="{{layout.logoUrl}}" alt="{{layout.brandName}}" width="120px" />';
const PLACEHOLDER = /\{\{(\{?)\s*([\w.]+)\s*\}?\}\}/g;

let mjml: Promise<typeof import("mjml")> | undefined;
const loadMjml = () => (mjml ??= import("mjml").then((m) => m.default));

/** The MJML sources a compilation depends on: the layout and every template's body. */
export async function readSources(dir: string): Promise<{ layout: string; bodies: Map<TemplateName, string> }> {
  const [layout, ...bodies] = await Promise.all([readFile(`${dir}/layout.mjml`, "utf8"), ...TEMPLATE_NAMES.map((n) => readFile(`${dir}/${n}.mjml`, "utf8"))]);
  return { layout: layout!, bodies: new Map(TEMPLATE_NAMES.map((n, i) => [n, bodies[i]!])) };
}

export function sourcesHash(sources: { layout: string; bodies: Map<TemplateName, string> }): string {
  const { version } = createRequire(import.meta.url)("mjml/package.json") as { version: string };
  return sha256Hex([`mjml ${version}`, "layout", sources.layout, ...[...sources.bodies].flat()].join("\0"));
}

/**
 * One template's MJML document: the layout with the body (and the logo, or nothing) in place.
 * The layout's own placeholders become `{{layout.x}}`: its `subject` is the email's, while a body
 * may have a `subject` of its own (the contact form's), as when each was filled on its own.
 */
function document(layout: string, body: string, withLogo: boolean): string {
  const own = layout.replace(PLACEHOLDER, (match, raw: string, key: string) =>
    key === "body" || key === "logo" ? match : raw ? `{{{layout.${key}}}}` : `{{layout.${key}}}`,
  );
  return own.replace("{{{body}}}", () => body).replace("{{{logo}}}", withLogo ? LOGO : "");
}

async function toHtml(source: string): Promise<string> {
  return (await (await loadMjml())(source, { validationLevel: "strict" })).html;
}

export async function compileTemplate(layout: string, body: string): Promise<CompiledTemplate> {
  return { plain: await toHtml(document(layout, body, false)), logo: await toHtml(document(layout, body, true)) };
}

export async function compileAll(dir: string): Promise<CompiledEmails> {
  const sources = await readSources(dir);
  const templates: Record<string, CompiledTemplate> = {};
  for (const [name, body] of sources.bodies) templates[name] = await compileTemplate(sources.layout, body);
  return { hash: sourcesHash(sources), templates };
}
