import { isIP } from "node:net";

/** The configuration's value types, its error, and the parsers of values buildConfig checks across variables. */

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

export interface RateRule {
  points: number;
  duration: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

// Development-only fallbacks. They are printed as warnings and refused in production.
export const DEV_SESSION_SECRET = "keyward-development-session-secret-change-me";
export const DEV_ENCRYPTION_KEY = "dev:" + Buffer.alloc(32, 7).toString("base64");

export function parseEncryptionKeys(entries: string[], problems: string[]): EncryptionKey[] {
  return entries.flatMap((entry) => {
    const [id, b64] = entry.split(":");
    const key = b64 ? Buffer.from(b64, "base64") : Buffer.alloc(0);
    if (!id || !/^[A-Za-z0-9_-]{1,16}$/.test(id) || key.length !== 32) {
      problems.push("ENCRYPTION_KEYS / CA_KEY_ENCRYPTION_KEY: each entry must be <id>:<base64 of 32 random bytes>");
      return [];
    }
    return [{ id, key }];
  });
}

/**
 * A provider base URL without its trailing slash. Plain http is allowed only on loopback (local
 * stand-ins in tests): tokens and codes never travel unencrypted across a network.
 */
export function providerUrl(name: string, value: string, problems: string[]): string {
  const url = new URL(value);
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) problems.push(`${name}: must be https (http only on loopback)`);
  return url.toString().replace(/\/+$/, "");
}

/** A DNS server as node:dns takes it: an IP address, with a port after it (IPv6 in brackets then). */
export function isDnsServer(value: string): boolean {
  const m = /^\[([0-9a-f:.]+)\](?::(\d{1,5}))?$/i.exec(value) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(value);
  const [address, port] = m ? [m[1]!, m[2]] : [value, undefined];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return false;
  return isIP(address) !== 0;
}
