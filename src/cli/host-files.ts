import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { CliError, ExitCode } from "./errors.js";

/** What `keyward host enroll` keeps beside the host keys (nothing secret: the server, organization and host ids). */
export interface HostState {
  server: string;
  organization_id: string;
  host_id: string;
  names: string[];
}

export const STATE_FILE = "keyward-host.json";
export const TRUSTED_FILE = "keyward_trusted_user_ca_keys";
export const KRL_FILE = "keyward_revoked_keys.krl";
export const SNIPPET_FILE = "50-keyward.conf";
/** One AuthorizedPrincipalsFile per local account (sshd reads `<dir>/%u`). */
export const PRINCIPALS_DIR = "keyward_principals";

/** A host public key found in the SSH directory. */
export interface HostKeyFile {
  /** The private key's path (the .pub without its suffix). */
  path: string;
  line: string;
  type: string;
}

/** The host's ssh_host_*_key.pub files (ed25519 first). */
export function readHostKeys(dir: string): HostKeyFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    throw new CliError(`Cannot read ${dir}: ${(e as Error).message}`, ExitCode.ERROR, "HOST_KEYS");
  }
  const keys = names
    .filter((n) => /^ssh_host_[a-z0-9]+_key\.pub$/.test(n))
    .map((n) => {
      const line = readFileSync(join(dir, n), "utf8").trim().split("\n")[0]!.trim();
      const [type = "", b64 = ""] = line.split(/\s+/);
      return { path: join(dir, n.slice(0, -4)), line: `${type} ${b64}`, type };
    });
  if (keys.length === 0) throw new CliError(`No host keys (ssh_host_*_key.pub) in ${dir}: generate them with \`ssh-keygen -A\``, ExitCode.ERROR, "HOST_KEYS");
  return keys.sort((a, b) => Number(b.type === "ssh-ed25519") - Number(a.type === "ssh-ed25519") || a.path.localeCompare(b.path));
}

export function readState(dir: string): HostState | null {
  const path = join(dir, STATE_FILE);
  if (!existsSync(path)) return null;
  try {
    const state = JSON.parse(readFileSync(path, "utf8")) as HostState;
    if (typeof state.host_id !== "string" || typeof state.server !== "string" || typeof state.organization_id !== "string") throw new Error("missing fields");
    return state;
  } catch (e) {
    throw new CliError(`${path} is not readable (${(e as Error).message}): enroll the host again`, ExitCode.ERROR, "HOST_STATE");
  }
}

/** A file to write: its path, content and mode. */
export interface PlannedFile {
  path: string;
  content: string | Buffer;
  mode: number;
}

/**
 * Writes every file through a temporary file in its directory and a rename, so sshd never reads a
 * half-written one. All temporaries are written first; renames follow only if all of them were.
 */
export function writeAtomically(files: PlannedFile[]): void {
  const temps: Array<{ tmp: string; path: string }> = [];
  try {
    for (const f of files) {
      mkdirSync(dirname(f.path), { recursive: true });
      const tmp = join(dirname(f.path), `.${basename(f.path)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
      writeFileSync(tmp, f.content, { mode: f.mode, flag: "wx" });
      chmodSync(tmp, f.mode);
      temps.push({ tmp, path: f.path });
    }
  } catch (e) {
    for (const t of temps) rmSync(t.tmp, { force: true });
    throw new CliError(`Could not write ${files[temps.length]?.path ?? "the files"}: ${(e as Error).message}`, ExitCode.ERROR, "WRITE_FAILED");
  }
  for (const t of temps) renameSync(t.tmp, t.path);
}

/**
 * The sshd configuration snippet: the host certificates, the trusted user CA keys, the KRL, and
 * when the organization maps principals to this host, the AuthorizedPrincipalsFile (per login:
 * an account without a file takes no certificate at all).
 */
export function sshdSnippet(dir: string, certPaths: string[], principalsMapped = false): string {
  return [
    "# Written by `keyward host enroll` / `keyward host renew`; rewritten on each renewal.",
    ...certPaths.map((p) => `HostCertificate ${p}`),
    `TrustedUserCAKeys ${join(dir, TRUSTED_FILE)}`,
    `RevokedKeys ${join(dir, KRL_FILE)}`,
    ...(principalsMapped ? [`AuthorizedPrincipalsFile ${join(dir, PRINCIPALS_DIR, "%u")}`] : []),
    "",
  ].join("\n");
}

/** The principals files for these logins, one principal a line. */
export function principalsFiles(dir: string, mapped: Array<{ login: string; principals: string[] }>): PlannedFile[] {
  return mapped
    .filter((m) => /^[a-z_][a-z0-9_-]*$/.test(m.login))
    .map((m) => ({ path: join(dir, PRINCIPALS_DIR, m.login), content: m.principals.filter((p) => /^[A-Za-z0-9._@-]+$/.test(p)).map((p) => `${p}\n`).join(""), mode: 0o644 }));
}

/** After the new files are in place: removes principals files of logins no longer mapped (their access ends with the mapping). */
export function removeStalePrincipals(dir: string, keep: PlannedFile[]): void {
  const folder = join(dir, PRINCIPALS_DIR);
  if (!existsSync(folder)) return;
  const kept = new Set(keep.map((f) => basename(f.path)));
  for (const name of readdirSync(folder)) if (!kept.has(name) && !name.startsWith(".")) rmSync(join(folder, name), { force: true });
}
