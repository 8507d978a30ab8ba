import { CliError, ExitCode } from "./errors.js";

/** The form credentials are keyed by: origin and path, no trailing slash, no query. */
export function normalizeServer(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.includes("://") ? raw : `https://${raw}`);
  } catch {
    throw new CliError(`Not a server address: ${raw}`, ExitCode.USAGE, "USAGE");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new CliError(`The server must be an http(s) address: ${raw}`, ExitCode.USAGE, "USAGE");
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** The flag wins, then KEYWARD_SERVER, then the server of the last login. */
export function resolveServer(flag: string | undefined, env: NodeJS.ProcessEnv, saved: string | undefined): string {
  const raw = flag || env.KEYWARD_SERVER || saved;
  if (!raw) throw new CliError("No server: pass --server URL or set KEYWARD_SERVER", ExitCode.USAGE, "USAGE");
  return normalizeServer(raw);
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Plain http sends tokens in the clear: fine on this computer, worth a warning anywhere else. */
export function insecureWarning(server: string): string | null {
  const url = new URL(server);
  return url.protocol === "http:" && !LOOPBACK.has(url.hostname) ? `warning: ${server} is plain http: tokens travel unencrypted` : null;
}
