import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CliError, ExitCode } from "../errors.js";
import { fetchWithTimeout } from "../http.js";
import {
  KRL_FILE,
  principalsFiles,
  readHostKeys,
  readState,
  removeStalePrincipals,
  SNIPPET_FILE,
  sshdSnippet,
  STATE_FILE,
  TRUSTED_FILE,
  writeAtomically,
  type HostKeyFile,
  type HostState,
  type PlannedFile,
} from "../host-files.js";
import type { Io, Result } from "../output.js";
import { normalizeServer } from "../server.js";

interface HostCredentials {
  host: { id: string; organization_id: string; names: string[]; name: string };
  renewed: boolean;
  renew_after: string | null;
  certificates: Array<{ fingerprint: string; key_type: string; public_key: string; serial: string; certificate: string; valid_before: string }>;
  trusted_user_ca_keys: string;
  krl_path: string;
  replaced_hosts?: string[];
  authorized_principals?: Array<{ login: string; principals: string[] }>;
}

export interface HostDirs {
  dir?: string;
  sshdConfigDir?: string;
}

const DEFAULT_SSH_DIR = "/etc/ssh";
const dirsOf = (o: HostDirs) => {
  const dir = resolve(o.dir ?? DEFAULT_SSH_DIR);
  return { dir, sshdConfigDir: resolve(o.sshdConfigDir ?? join(dir, "sshd_config.d")) };
};

/** A call to the host endpoints (no sign-in: the token or the host key is the proof). A refusal is one line and exit 1. */
async function call<T>(server: string, path: string, body: unknown): Promise<T> {
  const res = await fetchWithTimeout(`${server}/api/v1${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", "user-agent": "keyward-cli" },
    body: JSON.stringify(body),
  });
  const envelope = (await res.json().catch(() => null)) as { success?: boolean; message?: string; data?: T; error?: { type?: string; details?: Record<string, unknown> } } | null;
  if (!res.ok || !envelope?.success) {
    const type = envelope?.error?.type ?? `HTTP_${res.status}`;
    throw new CliError(`${envelope?.message ?? `HTTP ${res.status}`} (${type}); nothing was written`, ExitCode.ERROR, type, { status: res.status, ...(envelope?.error?.details ?? {}) });
  }
  return envelope.data as T;
}

async function fetchKrl(server: string, path: string): Promise<Buffer> {
  const res = await fetchWithTimeout(`${server}${path}`);
  if (!res.ok) throw new CliError(`The KRL could not be fetched (HTTP ${res.status}); nothing was written`, ExitCode.ERROR, "KRL_FETCH");
  return Buffer.from(await res.arrayBuffer());
}

/** Every file a host holds, from one answer of the server: nothing is written unless all of it is ready. */
function plan(dirs: { dir: string; sshdConfigDir: string }, keys: HostKeyFile[], creds: HostCredentials, krl: Buffer, state: HostState): PlannedFile[] {
  const byLine = new Map(keys.map((k) => [k.line, k]));
  const certs = creds.certificates.flatMap((c) => {
    const key = byLine.get(c.public_key.trim().split(/\s+/).slice(0, 2).join(" "));
    return key ? [{ path: `${key.path}-cert.pub`, content: `${c.certificate}\n`, mode: 0o644 }] : [];
  });
  if (certs.length === 0) throw new CliError("None of the certificates the server sent is for a host key in this directory; nothing was written", ExitCode.ERROR, "HOST_KEYS");
  const principals = principalsFiles(dirs.dir, creds.authorized_principals ?? []);
  return [
    ...certs,
    ...principals,
    { path: join(dirs.dir, TRUSTED_FILE), content: creds.trusted_user_ca_keys, mode: 0o644 },
    { path: join(dirs.dir, KRL_FILE), content: krl, mode: 0o644 },
    { path: join(dirs.dir, STATE_FILE), content: `${JSON.stringify(state, null, 2)}\n`, mode: 0o644 },
    { path: join(dirs.sshdConfigDir, SNIPPET_FILE), content: sshdSnippet(dirs.dir, certs.map((c) => c.path), principals.length > 0), mode: 0o644 },
  ];
}

const summary = (creds: HostCredentials) =>
  creds.certificates.map((c) => `  ${c.key_type}  serial ${c.serial}  valid until ${c.valid_before}`);

export async function hostEnroll(io: Io, opts: HostDirs & { server?: string; token?: string; names?: string; orgId?: string; dryRun?: boolean }, env: NodeJS.ProcessEnv): Promise<Result> {
  const raw = opts.server || env.KEYWARD_SERVER;
  if (!raw) throw new CliError("No server: pass --server URL or set KEYWARD_SERVER", ExitCode.USAGE, "USAGE");
  const server = normalizeServer(raw);
  const token = opts.token || env.KEYWARD_ENROLL_TOKEN;
  if (!token) throw new CliError("No enrollment token: pass --token (an organization admin creates one)", ExitCode.USAGE, "USAGE");
  const dirs = dirsOf(opts);
  const keys = readHostKeys(dirs.dir);
  const names = opts.names ? opts.names.split(",").map((n) => n.trim()).filter(Boolean) : undefined;
  const previous = readState(dirs.dir);
  const organizationId = opts.orgId ?? previous?.organization_id;
  if (opts.dryRun) {
    const text = [
      `Would send ${keys.length} host key(s) to ${server}${names ? ` for ${names.join(", ")}` : ""}:`,
      ...keys.map((k) => `  ${k.type}  ${k.path}.pub`),
      "and write:",
      ...keys.map((k) => `  ${k.path}-cert.pub`),
      `  ${join(dirs.dir, TRUSTED_FILE)}`,
      `  ${join(dirs.dir, KRL_FILE)}`,
      `  ${join(dirs.dir, STATE_FILE)}`,
      `  ${join(dirs.sshdConfigDir, SNIPPET_FILE)}`,
      "Nothing was sent (the token is not spent) and nothing was written.",
    ];
    return { json: { dry_run: true, server, host_keys: keys.map((k) => ({ type: k.type, path: `${k.path}.pub` })), names: names ?? null }, text };
  }
  io.stderr(io.err.dim(`Enrolling ${keys.length} host key(s) with ${server}…`));
  const creds = await call<HostCredentials>(server, "/ssh/hosts/enroll", { token, host_keys: keys.map((k) => k.line), ...(names ? { names } : {}), ...(organizationId ? { organization_id: organizationId } : {}) });
  const krl = await fetchKrl(server, creds.krl_path);
  const state: HostState = { server, organization_id: creds.host.organization_id, host_id: creds.host.id, names: creds.host.names };
  const files = plan(dirs, keys, creds, krl, state);
  writeAtomically(files);
  removeStalePrincipals(dirs.dir, files);
  return {
    json: { host: creds.host, certificates: creds.certificates, replaced_hosts: creds.replaced_hosts ?? [], files: files.map((f) => f.path) },
    text: [
      `Enrolled ${creds.host.names.join(", ")} (host ${creds.host.id}):`,
      ...summary(creds),
      ...(creds.replaced_hosts?.length ? [`Replaced the earlier enrollment under this name (host ${creds.replaced_hosts.join(", ")}): retired, its certificates revoked`] : []),
      `sshd snippet: ${join(dirs.sshdConfigDir, SNIPPET_FILE)} — check it with \`sshd -t\`, then reload sshd`,
      "Renew before expiry: `keyward host renew` (or `keyward host install-timer`)",
    ],
  };
}

/** `ssh-keygen -Y sign -n keyward-host-renew -f <host private key>` of the challenge: the armored SSHSIG. */
function signWithHostKey(privateKey: string, challenge: string, namespace: string): string {
  const dir = mkdtempSync(join(tmpdir(), "keyward-host-"));
  try {
    const file = join(dir, "challenge.txt");
    writeFileSync(file, `${challenge}\n`, { mode: 0o600 });
    const r = spawnSync("ssh-keygen", ["-Y", "sign", "-n", namespace, "-f", privateKey, file], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    if (r.error || r.status !== 0) {
      const why = r.error ? r.error.message : (r.stderr.split("\n").find((l) => l.trim()) ?? `exit status ${r.status}`);
      throw new CliError(`ssh-keygen could not sign with ${privateKey}: ${why.trim()}`, ExitCode.ERROR, "SSH_KEYGEN");
    }
    return readFileSync(`${file}.sig`, "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function hostRenew(io: Io, opts: HostDirs & { server?: string; force?: boolean; onRenew?: string }): Promise<Result> {
  const dirs = dirsOf(opts);
  const state = readState(dirs.dir);
  if (!state) throw new CliError(`${join(dirs.dir, STATE_FILE)} not found: enroll this host first (\`keyward host enroll\`)`, ExitCode.ERROR, "NOT_ENROLLED");
  const server = normalizeServer(opts.server || state.server);
  const keys = readHostKeys(dirs.dir);
  const challenge = await call<{ challenge: string; namespace: string; host_keys: string[] }>(server, "/ssh/hosts/renew/challenge", { host_id: state.host_id });
  const enrolled = new Set(challenge.host_keys.map((l) => l.trim().split(/\s+/).slice(0, 2).join(" ")));
  // Proof with a key the server knows for this host (ed25519 first); none held: the server decides with the first.
  const prover = keys.find((k) => enrolled.has(k.line)) ?? keys[0]!;
  const signature = signWithHostKey(prover.path, challenge.challenge, challenge.namespace);
  const creds = await call<HostCredentials>(server, "/ssh/hosts/renew", { host_id: state.host_id, challenge: challenge.challenge, signature, ...(opts.force ? { force: true } : {}) });
  const krl = await fetchKrl(server, creds.krl_path);
  const files = plan(dirs, keys, creds, krl, { ...state, server, names: creds.host.names });
  writeAtomically(files);
  removeStalePrincipals(dirs.dir, files);
  let hook: string | null = null;
  if (creds.renewed && opts.onRenew) {
    const r = spawnSync("/bin/sh", ["-c", opts.onRenew], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    hook = r.status === 0 ? "ok" : `failed (${r.stderr.trim() || `exit status ${r.status}`})`;
    if (r.status !== 0) io.stderr(io.err.yellow(`warning: --on-renew command failed: ${r.stderr.trim() || `exit status ${r.status}`}`));
  }
  return {
    json: { renewed: creds.renewed, renew_after: creds.renew_after, certificates: creds.certificates, files: files.map((f) => f.path), on_renew: hook },
    text: [
      creds.renewed ? "Renewed the host certificates:" : `Not due yet (renews after ${creds.renew_after}); the KRL and trusted CA keys were refreshed:`,
      ...summary(creds),
      ...(creds.renewed && !opts.onRenew ? ["sshd reads host certificates at start: reload it (or pass --on-renew 'systemctl reload ssh')"] : []),
    ],
  };
}

const DEFAULT_ON_RENEW = "systemctl try-reload-or-restart ssh.service sshd.service";

/** Writes keyward-host-renew.service and .timer (hourly, with jitter) calling `keyward host renew`. */
export function hostInstallTimer(opts: HostDirs & { unitDir?: string; onRenew?: string; keyward?: string }): Result {
  const dirs = dirsOf(opts);
  const unitDir = resolve(opts.unitDir ?? "/etc/systemd/system");
  const self = opts.keyward ?? `${process.execPath} ${resolve(process.argv[1] ?? "keyward")}`;
  const quote = (s: string) => (/^[A-Za-z0-9_./:=-]+$/.test(s) ? s : `"${s.replace(/(["\\$])/g, "\\$1").replace(/%/g, "%%")}"`);
  const service = [
    "[Unit]",
    "Description=Renew this host's SSH certificates and refresh the KRL (Keyward)",
    "Wants=network-online.target",
    "After=network-online.target",
    "",
    "[Service]",
    "Type=oneshot",
    `ExecStart=${self} host renew --dir ${quote(dirs.dir)} --sshd-config-dir ${quote(dirs.sshdConfigDir)} --on-renew ${quote(opts.onRenew ?? DEFAULT_ON_RENEW)}`,
    "",
  ].join("\n");
  const timer = [
    "[Unit]",
    "Description=Renew this host's SSH certificates and refresh the KRL (Keyward), hourly with jitter",
    "",
    "[Timer]",
    "OnBootSec=2min",
    "OnCalendar=hourly",
    "RandomizedDelaySec=15min",
    "Persistent=true",
    "",
    "[Install]",
    "WantedBy=timers.target",
    "",
  ].join("\n");
  const files = [
    { path: join(unitDir, "keyward-host-renew.service"), content: service, mode: 0o644 },
    { path: join(unitDir, "keyward-host-renew.timer"), content: timer, mode: 0o644 },
  ];
  writeAtomically(files);
  return {
    json: { files: files.map((f) => f.path) },
    text: [...files.map((f) => `wrote ${f.path}`), "Start it: systemctl daemon-reload && systemctl enable --now keyward-host-renew.timer"],
  };
}
