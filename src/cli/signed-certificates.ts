import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";

/** How many paths are kept: the most recent signings, enough for every key a person uses. */
const KEEP = 50;

/**
 * Where `keyward ssh sign` wrote certificates (`<key>-cert.pub`, next to whichever key it signed),
 * kept in the config directory so that `keyward ssh status` finds a key's certificate outside
 * ~/.ssh too. Paths only: the certificates themselves stay where ssh reads them.
 */
export class SignedCertificates {
  readonly path: string;

  constructor(private readonly dir: string) {
    this.path = join(dir, "certificates.json");
  }

  /** The recorded paths, most recent first (those since deleted included: the caller checks). */
  list(): string[] {
    try {
      const parsed = JSON.parse(readFileSync(this.path, "utf8")) as { version?: unknown; paths?: unknown };
      return parsed.version === 1 && Array.isArray(parsed.paths) ? parsed.paths.filter((p): p is string => typeof p === "string") : [];
    } catch {
      return [];
    }
  }

  /** Records a certificate just written; paths that no longer exist are dropped on the way. */
  add(certificatePath: string): void {
    const path = resolve(certificatePath);
    const paths = [path, ...this.list().filter((p) => p !== path && existsSync(p))].slice(0, KEEP);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // Written aside and renamed, as the credentials are: a crash never leaves half a file.
    const tmp = `${this.path}.${process.pid}.tmp`;
    const fd = openSync(tmp, "w", 0o600);
    try {
      writeSync(fd, JSON.stringify({ version: 1, paths }, null, 2) + "\n");
    } finally {
      closeSync(fd);
    }
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.path);
  }
}
