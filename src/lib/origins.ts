/**
 * Matches origins against CORS_ORIGINS entries: exact origins, "*" (any), or wildcard host
 * patterns such as "https://*.example.com" (one or more subdomain labels, same scheme and port).
 */
export function createOriginMatcher(patterns: readonly string[]) {
  const exact = new Set<string>();
  const wildcards: RegExp[] = [];
  let any = false;
  for (const p of patterns) {
    if (p === "*") any = true;
    else if (p.includes("*")) {
      const escape = (part: string) => part.replace(/[.+?^${}()|[\]\\/]/g, "\\$&");
      const labels = "[a-z0-9-]+(?:\\.[a-z0-9-]+)*";
      wildcards.push(new RegExp(`^${p.replace(/\/+$/, "").split("*").map(escape).join(labels)}$`, "i"));
    } else exact.add(p.replace(/\/+$/, "").toLowerCase());
  }
  return {
    /** True when any origin is allowed ("*"). */
    any,
    allows(origin: string): boolean {
      const o = origin.toLowerCase();
      return any || exact.has(o) || wildcards.some((w) => w.test(o));
    },
  };
}

export type OriginMatcher = ReturnType<typeof createOriginMatcher>;

/** The origin of a URL, or null when it is not an absolute http(s) URL. */
export function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : null;
  } catch {
    return null;
  }
}
