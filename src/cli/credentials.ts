import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import envPaths from "env-paths";

/** One server's sign-in: the tokens and what is needed to refresh and revoke them. */
export interface ServerCredentials {
  issuer: string;
  resource: string;
  clientId: string;
  accessToken: string;
  refreshToken?: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  scope: string;
  user?: { id: string; email: string; name?: string | null };
}

interface CredentialsFile {
  version: 1;
  /** The server of the last login: used when neither --server nor KEYWARD_SERVER says. */
  current?: string;
  servers: Record<string, ServerCredentials>;
}

/** ~/.config/keyward on Linux (XDG_CONFIG_HOME honoured), or KEYWARD_CONFIG_DIR (tests, several profiles). */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.KEYWARD_CONFIG_DIR || envPaths("keyward", { suffix: "" }).config;
}

const empty = (): CredentialsFile => ({ version: 1, servers: {} });

/**
 * The credentials file: readable by its owner only (0600 in a 0700 directory), since its refresh
 * token signs in as the user. Writes go to a temporary file created 0600 and renamed over the old
 * one, so a crash never leaves a half-written file and the tokens are never briefly world-readable.
 */
export class CredentialStore {
  readonly path: string;

  constructor(readonly dir: string) {
    this.path = join(dir, "credentials.json");
  }

  private read(): CredentialsFile {
    if (!existsSync(this.path)) return empty();
    // A copy restored with loose permissions is tightened before it is used.
    if ((statSync(this.path).mode & 0o077) !== 0) chmodSync(this.path, 0o600);
    try {
      const parsed = JSON.parse(readFileSync(this.path, "utf8")) as CredentialsFile;
      return parsed?.version === 1 && parsed.servers ? parsed : empty();
    } catch {
      return empty();
    }
  }

  private write(file: CredentialsFile): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    const tmp = `${this.path}.${process.pid}.tmp`;
    const fd = openSync(tmp, "w", 0o600);
    try {
      writeSync(fd, JSON.stringify(file, null, 2) + "\n");
    } finally {
      closeSync(fd);
    }
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.path);
  }

  get(server: string): ServerCredentials | undefined {
    return this.read().servers[server];
  }

  current(): string | undefined {
    return this.read().current;
  }

  save(server: string, creds: ServerCredentials, makeCurrent = false): void {
    const file = this.read();
    file.servers[server] = creds;
    if (makeCurrent) file.current = server;
    this.write(file);
  }

  remove(server: string): void {
    const file = this.read();
    if (!(server in file.servers)) return;
    delete file.servers[server];
    this.write(file);
  }

  /**
   * Runs `fn` holding a lock file. Refresh tokens rotate and reusing an old one revokes the whole
   * sign-in, so two keyward processes must not refresh the same token at once.
   */
  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const lock = join(this.dir, "credentials.lock");
    for (let waited = 0; ; waited += 100) {
      try {
        closeSync(openSync(lock, "wx", 0o600));
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
        // A lock left by a killed process is taken over after 30 s.
        const held = statSync(lock, { throwIfNoEntry: false });
        if (waited >= 15_000 || (held && Date.now() - held.mtimeMs > 30_000)) rmSync(lock, { force: true });
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    try {
      return await fn();
    } finally {
      rmSync(lock, { force: true });
    }
  }
}
