import { spawnSync } from "node:child_process";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { certStatus, parseCertificateListing } from "../cert-status.js";
import type { Ctx } from "../context.js";
import { CliError, ExitCode, toFailure } from "../errors.js";
import { findKey, type LocalKey } from "../local-keys.js";
import { chooseOrg, orgChoiceNeeded } from "../org-choice.js";
import type { Io, Result } from "../output.js";
import { listCertificate } from "../ssh-keygen.js";
import { writeAtomic } from "../atomic-write.js";
import { sign } from "./ssh.js";

/** One organization as `GET /ssh/client-config` describes it. */
interface ClientOrg {
  id: string;
  name: string;
  slug: string;
  has_user_ca: boolean;
  host_ca: { id: string; name: string; host_patterns: string[] | null; known_hosts: string[] } | null;
}

export interface ConfigOptions {
  orgId?: string[];
  all?: boolean;
  print?: boolean;
  install?: boolean;
  key?: string;
}

export interface EnsureOptions {
  orgId: string;
  key?: string;
  quiet?: boolean;
  marginMinutes?: number;
}

/** Where everything `ssh config` writes lives: ~/.ssh/keyward (0700). */
export const keywardSshDir = () => join(homedir(), ".ssh", "keyward");
/** The certificate `ssh ensure` keeps for an organization (one per organization: two never overwrite each other). */
export const orgCertPath = (orgId: string) => join(keywardSshDir(), `${orgId}-cert.pub`);

const BEGIN = "# >>> keyward ssh config (managed by keyward: run `keyward ssh config --install` to change) >>>";
const END = "# <<< keyward ssh config <<<";

/** A path as an ssh_config argument: `%` is a token there, a double quote cannot be written at all. */
function configPath(path: string): string {
  if (/["\n\r]/.test(path)) throw new CliError(`ssh_config cannot name ${JSON.stringify(path)} (a quote or line break in the path)`, ExitCode.USAGE, "BAD_PATH");
  const escaped = path.replace(/%/g, "%%");
  return /\s/.test(escaped) ? `"${escaped}"` : escaped;
}

/** A word for the shell that `Match exec` runs, inside the directive's double quotes. */
function shellWord(word: string): string {
  if (/["\n\r]/.test(word)) throw new CliError(`ssh_config cannot run ${JSON.stringify(word)} (a quote or line break)`, ExitCode.USAGE, "BAD_PATH");
  const escaped = word.replace(/%/g, "%%");
  return /^[A-Za-z0-9_\/.:=@+-]+$/.test(escaped) ? escaped : `'${escaped.replace(/'/g, `'\\''`)}'`;
}

/** How ssh runs this same client: this Node and this script, whatever PATH ssh's shell has. */
function selfCommand(): string[] {
  const script = process.argv[1];
  return script ? [process.execPath, script] : ["keyward"];
}

/** Patterns a Match host line can carry: what the server validated, checked again here. */
function matchPatterns(org: ClientOrg): string | null {
  const patterns = org.host_ca?.host_patterns;
  if (!patterns?.length || !patterns.every((p) => /^!?[A-Za-z0-9.*?_:\[\]-]+$/.test(p))) return null;
  return patterns.join(",");
}

/** Text from the server inside a `#` comment: one line, whatever it holds (a name with a line break must not add a directive). */
const comment = (text: string) => text.replace(/[\x00-\x1f\x7f\u2028\u2029]+/g, " ");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A known_hosts line as the server builds it: the marker, the patterns, a key, maybe a comment; one line. */
const KNOWN_HOSTS_LINE = /^@cert-authority [A-Za-z0-9.*?_:\[\]!,-]+ [A-Za-z0-9@.-]+ [A-Za-z0-9+/=]+( [^\x00-\x1f\x7f]*)?$/;

export interface Rendered {
  config: string;
  knownHosts: string;
}

/** The two files, from what the server said: the same input gives the same bytes. */
export function render(server: string, key: LocalKey, orgs: ClientOrg[], paths: { knownHosts: string; home: string }): Rendered {
  const header = (what: string) => [`# ${what}, written by \`keyward ssh config\` for ${server}.`, "# Do not edit: run `keyward ssh config` again instead (it rewrites this file whole).", ""];
  const config = [...header("SSH client configuration"), `# Included from ~/.ssh/config. Certificates are renewed by \`keyward ssh ensure\` when missing or about to expire.`, ""];
  const knownHosts = [...header("Host certificate authorities of your organizations")];
  const userKnownHosts = [paths.knownHosts, join(paths.home, ".ssh", "known_hosts"), join(paths.home, ".ssh", "known_hosts2")].map(configPath).join(" ");
  for (const org of orgs) {
    const patterns = matchPatterns(org)!;
    // What the server sends ends up in a file ssh obeys: checked here too, not only trusted.
    if (!UUID.test(org.id)) throw new CliError(`The server sent an organization id that is not one: ${JSON.stringify(org.id)}`, ExitCode.ERROR, "BAD_ANSWER");
    const bad = org.host_ca!.known_hosts.find((l) => !KNOWN_HOSTS_LINE.test(l));
    if (bad !== undefined) throw new CliError(`The server sent a known_hosts line keyward will not write: ${JSON.stringify(bad)}`, ExitCode.ERROR, "BAD_ANSWER");
    const ensure = [...selfCommand(), "ssh", "ensure", "--server", server, "--org-id", org.id, "--key", key.privatePath, "--quiet"].map(shellWord).join(" ");
    const title = `# ${comment(org.name)} (${comment(org.slug)}, ${org.id})`;
    config.push(
      title,
      `Match host ${patterns} exec "${ensure}"`,
      `  CertificateFile ${configPath(orgCertPath(org.id))}`,
      `  IdentityFile ${configPath(key.privatePath)}`,
      `  UserKnownHostsFile ${userKnownHosts}`,
      "",
    );
    knownHosts.push(title, ...org.host_ca!.known_hosts, "");
  }
  return { config: config.join("\n"), knownHosts: knownHosts.join("\n") };
}

/** Which organizations the file covers: named ones, all, the only one, or the person's choice. */
async function choose(io: Io, orgs: ClientOrg[], opts: ConfigOptions): Promise<ClientOrg[]> {
  const signing = orgs.filter((o) => o.has_user_ca);
  let chosen: ClientOrg[];
  if (opts.orgId?.length) {
    chosen = opts.orgId.map((id) => {
      const org = orgs.find((o) => o.id === id);
      if (!org) throw new CliError(`You are not a member of an organization with id ${id} (\`keyward orgs\` lists yours)`, ExitCode.USAGE, "ORG_NOT_FOUND");
      if (!org.has_user_ca) throw new CliError(`${org.name} has no user certificate authority: nothing to sign your key with there`, ExitCode.ERROR, "CA_NOT_CONFIGURED");
      return org;
    });
  } else if (opts.all || signing.length === 1) {
    chosen = signing;
  } else if (signing.length === 0) {
    throw new CliError("None of your organizations has a user certificate authority: ask an admin to create one", ExitCode.ERROR, "CA_NOT_CONFIGURED");
  } else {
    const candidates = signing.map((o) => ({ id: o.id, name: o.name }));
    if (!io.interactive) throw orgChoiceNeeded(candidates);
    const id = await chooseOrg(io, candidates);
    chosen = signing.filter((o) => o.id === id);
  }
  const usable = chosen.filter((o) => matchPatterns(o));
  const unusable = chosen.filter((o) => !matchPatterns(o));
  for (const o of unusable) {
    const why = o.host_ca ? "its host CA has no host patterns" : "it has no host CA";
    const message = `${o.name}: ${why}, so no host is known to be its: ask an admin to set them (the organization's SSH page, or PATCH /api/v1/organizations/${o.id}/cas/<host CA id> {"host_patterns": [...]})`;
    // Named alone, it is an error; among several, the others still get their lines.
    if (chosen.length === 1) throw new CliError(message, ExitCode.ERROR, "NO_HOST_PATTERNS");
    io.stderr(io.err.yellow(`warning: ${message}`));
  }
  if (usable.length === 0) throw new CliError("None of the chosen organizations has host patterns: nothing to write", ExitCode.ERROR, "NO_HOST_PATTERNS");
  // Stable order, whatever the order of --org-id: the same choice writes the same bytes.
  return [...new Map(usable.map((o) => [o.id, o])).values()].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

/**
 * Adds the Include line at the top of ~/.ssh/config inside a marked block, or refreshes that block
 * where it is; every other line stays as it was. Include must come before any Host or Match line
 * of the file to apply to every host, hence the top.
 */
export function installInclude(userConfig: string, includeLine: string): { changed: boolean } {
  const current = existsSync(userConfig) ? readFileSync(userConfig, "utf8") : "";
  const block = `${BEGIN}\n${includeLine}\n${END}\n`;
  const lines = current.split("\n");
  const start = lines.findIndex((l) => l.trim() === BEGIN);
  const end = start < 0 ? -1 : lines.findIndex((l, i) => i > start && l.trim() === END);
  let next: string;
  if (start >= 0 && end > start) next = [...lines.slice(0, start), ...block.trimEnd().split("\n"), ...lines.slice(end + 1)].join("\n");
  else if (start >= 0) throw new CliError(`${userConfig} has the start of keyward's block but not its end (${END}): fix it by hand, then run again`, ExitCode.ERROR, "BROKEN_BLOCK");
  else next = block + (current && !current.startsWith("\n") ? "\n" : "") + current;
  const mode = existsSync(userConfig) ? statSync(userConfig).mode & 0o777 & ~0o022 : 0o600;
  mkdirSync(dirname(userConfig), { recursive: true, mode: 0o700 });
  return { changed: writeAtomic(userConfig, next, mode) };
}

/** `keyward ssh config`: the Include-able ssh_config and known_hosts for the person's organizations. */
export async function sshConfig(ctx: Ctx, opts: ConfigOptions): Promise<Result> {
  const key = findKey(opts.key);
  const { organizations } = await ctx.api.get<{ organizations: ClientOrg[] }>("/ssh/client-config");
  const orgs = await choose(ctx.io, organizations, opts);
  const home = homedir();
  const dir = keywardSshDir();
  const configPathOnDisk = join(dir, "config");
  const knownHostsPath = join(dir, "known_hosts");
  const rendered = render(ctx.server, key, orgs, { knownHosts: knownHostsPath, home });
  const includeLine = `Include ${configPath(configPathOnDisk)}`;
  const summary = orgs.map((o) => ({ id: o.id, name: o.name, slug: o.slug, host_patterns: o.host_ca!.host_patterns, certificate_path: orgCertPath(o.id) }));
  const c = ctx.io.out;
  if (opts.print) {
    return {
      json: { config: rendered.config, known_hosts: rendered.knownHosts, include_line: includeLine, organizations: summary },
      text: [`# ${configPathOnDisk}`, rendered.config, `# ${knownHostsPath}`, rendered.knownHosts, `# add at the top of ~/.ssh/config:`, includeLine],
    };
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const changed = { config: writeAtomic(configPathOnDisk, rendered.config), known_hosts: writeAtomic(knownHostsPath, rendered.knownHosts) };
  const userConfig = join(home, ".ssh", "config");
  const existing = existsSync(userConfig) ? readFileSync(userConfig, "utf8") : "";
  const included = existing.split("\n").some((l) => l.trim() === includeLine);
  let installed = included;
  if (opts.install) installed = installInclude(userConfig, includeLine).changed || included;
  const text = [
    `${c.green("✓")} ${changed.config ? "Wrote" : "Unchanged:"} ${configPathOnDisk}`,
    `${c.green("✓")} ${changed.known_hosts ? "Wrote" : "Unchanged:"} ${knownHostsPath}`,
    ...orgs.map((o) => `  ${c.bold(o.name)}: hosts ${o.host_ca!.host_patterns!.join(",")}`),
    installed || opts.install
      ? `${c.green("✓")} ${userConfig} includes it`
      : `Add this line at the top of ${userConfig} (or run again with --install):\n\n  ${includeLine}\n`,
  ];
  return {
    json: { config_path: configPathOnDisk, known_hosts_path: knownHostsPath, include_line: includeLine, included: installed || Boolean(opts.install), changed, organizations: summary },
    text,
  };
}

/** The SHA256 fingerprint ssh-keygen gives a public key file (null when it cannot say). */
function fingerprint(publicPath: string): string | null {
  const out = spawnSync("ssh-keygen", ["-l", "-E", "sha256", "-f", publicPath], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return out.status === 0 ? (out.stdout.split(/\s+/)[1] ?? null) : null;
}

/**
 * Whether the certificate on disk can be used as it is: present, for this key, valid for longer
 * than the margin (ten minutes, or a fifth of its lifetime when that is shorter). Offline.
 */
export function certificateIsFresh(path: string, key: LocalKey, marginMinutes: number | undefined, now = new Date()): boolean {
  if (!existsSync(path)) return false;
  let listing: string;
  let info;
  try {
    listing = listCertificate(path);
    info = parseCertificateListing(listing);
  } catch {
    return false;
  }
  const certKey = /^\s*Public key:\s*\S+\s+(\S+)/m.exec(listing)?.[1];
  // A certificate for another key (the person switched keys) is as good as none.
  if (!certKey || certKey !== fingerprint(key.publicPath)) return false;
  const s = certStatus(info, now);
  if (s.state !== "valid") return false;
  if (s.remainingMs === null) return true;
  const lifetime = info.validBefore && info.validAfter ? info.validBefore.getTime() - info.validAfter.getTime() : Infinity;
  const margin = marginMinutes !== undefined ? marginMinutes * 60_000 : Math.min(10 * 60_000, lifetime / 5);
  return s.remainingMs > margin;
}

/** How long a lock may be held before it counts as left behind by a process that died. */
const STALE_LOCK_MS = 60_000;

/** An exclusive lock file (O_EXCL); waits for a holder, takes over a stale one. */
async function lock(path: string, waitMs = 45_000): Promise<() => void> {
  for (let waited = 0; ; waited += 100) {
    try {
      closeSync(openSync(path, "wx", 0o600));
      return () => rmSync(path, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      let age = 0;
      try {
        age = Date.now() - statSync(path).mtimeMs;
      } catch {
        continue;
      }
      if (age > STALE_LOCK_MS) rmSync(path, { force: true });
      else if (waited >= waitMs) throw new CliError(`another keyward has held ${path} for ${Math.round(age / 1000)} s`, ExitCode.ERROR, "LOCKED");
      else await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * `keyward ssh ensure`: what the `Match exec` of the generated config runs before each connection
 * to a matching host. A fresh certificate costs no network; a missing, expiring or foreign one is
 * signed again through `ssh sign`. It always exits 0, so that ssh goes on (with whatever
 * certificate there is); a failure is one line on stderr.
 */
export async function ensure(io: Io, opts: EnsureOptions, makeCtx: () => Ctx): Promise<Result> {
  const path = orgCertPath(opts.orgId);
  const fresh = { json: { certificate_path: path, renewed: false }, text: opts.quiet ? [] : [`Certificate ${path} is valid`] };
  try {
    if (!/^[0-9a-f-]{36}$/i.test(opts.orgId)) throw new CliError(`--org-id must be an organization id (a UUID), not ${JSON.stringify(opts.orgId)}`, ExitCode.USAGE, "USAGE");
    const key = findKey(opts.key);
    if (certificateIsFresh(path, key, opts.marginMinutes)) return fresh;
    mkdirSync(keywardSshDir(), { recursive: true, mode: 0o700 });
    // Parallel connections (ansible's forks, a tmux of ssh sessions) sign once: the others wait for
    // the first and find its certificate fresh.
    const release = await lock(`${path}.lock`);
    try {
      if (certificateIsFresh(path, key, opts.marginMinutes)) return fresh;
      const signed = await sign(makeCtx(), { orgId: opts.orgId, key: opts.key, out: path });
      return { json: { ...(signed.json as object), renewed: true }, text: opts.quiet ? [] : signed.text };
    } finally {
      release();
    }
  } catch (e) {
    const f = toFailure(e);
    io.stderr(`keyward: no new certificate for ${opts.orgId}: ${f.message}`);
    return { json: { certificate_path: path, renewed: false, error: { type: f.type, message: f.message } }, text: [] };
  }
}
