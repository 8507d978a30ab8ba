import { ENV_SECTIONS, varDoc } from "./env.js";

/**
 * `.env.example` and docs/configuration.md, written from the configuration schema (src/config/env.ts)
 * so that neither can drift from what the service reads: `npm run config:docs` rewrites both and a
 * unit test fails when the checked-in files differ.
 */
const shellValue = (v: string): string => (/[\s"'<>]/.test(v) ? JSON.stringify(v) : v);

export function renderEnvExample(): string {
  const out = [
    "# Keyward configuration, generated from src/config/env.ts by `npm run config:docs` (do not edit).",
    "# Every variable is optional for `npm start` on a laptop (the embedded default); production needs at",
    "# least SESSION_SECRET, ENCRYPTION_KEYS, PUBLIC_URL, DATABASE_URL and REDIS_URL. Durations are in",
    "# seconds unless the name ends in _MS. Lists are comma-separated, current value first.",
    "# Reference with types: docs/configuration.md.",
  ];
  for (const section of ENV_SECTIONS) {
    out.push("", `# --- ${section.title} `.padEnd(100, "-"));
    for (const [name, schema] of Object.entries(section.vars)) {
      const d = varDoc(schema);
      out.push(`${`${name}=${shellValue(d.fallback)}`.padEnd(40)} # ${d.description}`);
    }
  }
  return `${out.join("\n")}\n`;
}

const cell = (s: string): string => s.replace(/\|/g, "\\|");

export function renderConfigReference(): string {
  const out = [
    "# Configuration reference",
    "",
    "Generated from `src/config/env.ts` by `npm run config:docs`; a test fails when this file and the",
    "schema differ. Keyward reads these environment variables (and a `.env` file in the working",
    "directory) once at start; a bad value stops the process with a list of every problem. Durations",
    "are in seconds unless the name ends in `_MS`; lists are comma-separated with the current value",
    "first (secrets rotate by putting the new one first).",
  ];
  for (const section of ENV_SECTIONS) {
    out.push("", `## ${section.title}`, "", "| Variable | Type | Default | Meaning |", "|---|---|---|---|");
    for (const [name, schema] of Object.entries(section.vars)) {
      const d = varDoc(schema);
      out.push(`| \`${name}\` | ${cell(d.kind)} | ${d.fallback === "" ? "(unset)" : `\`${cell(d.fallback)}\``} | ${cell(d.description)} |`);
    }
  }
  return `${out.join("\n")}\n`;
}
