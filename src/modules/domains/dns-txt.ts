import { Resolver } from "node:dns/promises";

/** The TXT record that proves a claim: where it lives and what it says. */
export const challengeName = (domain: string): string => `_keyward-verification.${domain}`;
export const challengeValue = (token: string): string => `keyward-verification=${token}`;

/**
 * What one lookup found. `definitive`: the DNS answered (no such name, no TXT there, or records
 * without the token); otherwise it could not be asked (timeout, SERVFAIL, refused), which says
 * nothing about the record and never counts against a verified domain.
 */
export type ChallengeLookup = { found: true } | { found: false; definitive: boolean; reason: string };

export interface DnsSettings {
  /** Servers as node:dns takes them ("127.0.0.1:5353"); empty: the system's resolvers. */
  resolvers: readonly string[];
  timeoutMs: number;
}

/** The one place Keyward asks DNS: the challenge's TXT records, through the configured servers. */
export function createChallengeLookup(settings: DnsSettings) {
  return async (domain: string, token: string): Promise<ChallengeLookup> => {
    // A resolver per lookup: its timeout and servers are its own, and nothing is cached between checks.
    const resolver = new Resolver({ timeout: settings.timeoutMs, tries: 2 });
    if (settings.resolvers.length > 0) resolver.setServers([...settings.resolvers]);
    const name = challengeName(domain);
    const expected = challengeValue(token);
    try {
      // A record of several strings is one value (long values are split at 255 bytes).
      const values = (await resolver.resolveTxt(name)).map((chunks) => chunks.join(""));
      if (values.some((v) => v.trim() === expected)) return { found: true };
      return { found: false, definitive: true, reason: `The TXT records at ${name} do not include ${expected}` };
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (code === "ENOTFOUND" || code === "ENODATA") return { found: false, definitive: true, reason: `No TXT record at ${name}: publish ${expected} there` };
      return { found: false, definitive: false, reason: `The DNS lookup of ${name} failed (${typeof code === "string" ? code : "error"}); it will be tried again` };
    } finally {
      resolver.cancel();
    }
  };
}

export type ChallengeLookupFn = ReturnType<typeof createChallengeLookup>;
