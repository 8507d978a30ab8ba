import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CliError } from "./errors.js";

/** Runs ssh-keygen; a missing binary or a failure becomes one readable line. */
function sshKeygen(args: string[], options: { env?: NodeJS.ProcessEnv; interactive?: boolean } = {}): string {
  const result = spawnSync("ssh-keygen", args, {
    encoding: "utf8",
    env: options.env ?? process.env,
    // A passphrase-protected key asks on the terminal; ssh-keygen reads it from there itself.
    stdio: [options.interactive ? "inherit" : "ignore", "pipe", "pipe"],
  });
  if (result.error) {
    const missing = (result.error as NodeJS.ErrnoException).code === "ENOENT";
    throw new CliError(missing ? "ssh-keygen was not found: install OpenSSH's client tools" : `ssh-keygen failed: ${result.error.message}`, 1, "SSH_KEYGEN");
  }
  if (result.status !== 0) {
    const why = result.stderr.split("\n").find((l) => l.trim()) ?? `exit status ${result.status}`;
    throw new CliError(`ssh-keygen ${args[0]} ${args[1] ?? ""} failed: ${why.trim()}`, 1, "SSH_KEYGEN");
  }
  return result.stdout;
}

/**
 * Proof of possession: signs the server's challenge as a file (namespace "file"), exactly as a
 * person would with `ssh-keygen -Y sign -n file -f KEY challenge.txt`, and returns the armored
 * SSHSIG. The challenge file lives in a private temporary directory that is removed afterwards.
 */
export function signChallenge(privateKeyPath: string, challenge: string): string {
  const dir = mkdtempSync(join(tmpdir(), "keyward-"));
  try {
    const file = join(dir, "challenge.txt");
    writeFileSync(file, `${challenge}\n`, { mode: 0o600 });
    sshKeygen(["-Y", "sign", "-n", "file", "-f", privateKeyPath, file], { interactive: true });
    return readFileSync(`${file}.sig`, "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `ssh-keygen -L` of a certificate, with times printed in UTC so they parse without guessing a zone. */
export function listCertificate(path: string): string {
  return sshKeygen(["-L", "-f", path], { env: { ...process.env, TZ: "UTC" } });
}
