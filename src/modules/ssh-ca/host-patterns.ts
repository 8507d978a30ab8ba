import { z } from "zod";

/**
 * A host CA's host patterns: which hosts its `@cert-authority` line vouches for in known_hosts, and
 * which hosts `keyward ssh config` sends through the organization's certificate. They are OpenSSH
 * patterns (`*` and `?` wildcards, `!` first to exclude), one host name or address each: no spaces
 * and no commas (a comma would smuggle a second pattern into the line, a space a second field).
 */
const PATTERN = /^!?[A-Za-z0-9.*?_:\[\]-]+$/;
/** A pattern that names no letter or digit (`*`, `*.*`, `?*`) matches every host. */
const matchesAnyHost = (p: string) => !/[A-Za-z0-9]/.test(p);

export const hostPatternSchema = z
  .string()
  .trim()
  .min(1, "a host pattern cannot be empty")
  .max(253)
  .regex(PATTERN, "a host pattern holds letters, digits and . - _ : [ ] * ? (and ! first, to exclude), without spaces or commas");

export const hostPatternsSchema = z
  .array(hostPatternSchema)
  .min(1, "give at least one host pattern, or null to clear them")
  .max(64)
  .transform((list) => [...new Set(list)]);

/**
 * The checks between patterns: at least one that includes hosts; a pattern that matches every host
 * only when the caller says so (`allow_any_host`): a CA trusted for `*` vouches for github.com too.
 */
export function hostPatternProblems(patterns: string[], allowAnyHost: boolean): string[] {
  const problems: string[] = [];
  const positive = patterns.filter((p) => !p.startsWith("!"));
  if (positive.length === 0) problems.push("at least one pattern must include hosts (not only exclude them with !)");
  for (const p of patterns) {
    if (p.startsWith("!") && matchesAnyHost(p.slice(1))) problems.push(`${p} excludes every host`);
    else if (!p.startsWith("!") && matchesAnyHost(p) && !allowAnyHost) problems.push(`${p} matches every host: set allow_any_host to true to mean it`);
  }
  return problems;
}

/**
 * The known_hosts host field for patterns. OpenSSH looks a host on another port than 22 up as
 * `[name]:port`, so each plain pattern also gets its bracketed twin: `*.prod.example.com` vouches
 * for `[web1.prod.example.com]:2222` as well. Unset patterns keep the historical `*`.
 */
export function knownHostsField(patterns: string[] | null): string {
  if (!patterns?.length) return "*";
  return patterns
    .flatMap((p) => {
      const neg = p.startsWith("!") ? "!" : "";
      const body = neg ? p.slice(1) : p;
      return body.includes("[") || body === "*" ? [p] : [p, `${neg}[${body}]:*`];
    })
    .join(",");
}

export const knownHostsLine = (patterns: string[] | null, publicKey: string) => `@cert-authority ${knownHostsField(patterns)} ${publicKey}`;
