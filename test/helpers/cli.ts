import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The bundled client, as `npm install` leaves it. */
export const CLI = resolve(import.meta.dirname, "../../dist/cli/keyward.mjs");

/** Builds dist/cli/keyward.mjs from the current sources (the e2e tests drive what users run). */
export function buildCli(): void {
  const res = spawnSync(process.execPath, [resolve(import.meta.dirname, "../../node_modules/tsx/dist/cli.mjs"), "src/tasks/build-cli.ts"], {
    cwd: resolve(import.meta.dirname, "../.."),
    encoding: "utf8",
  });
  if (res.status !== 0 || !existsSync(CLI)) throw new Error(`CLI build failed: ${res.stderr}`);
}

/** A person's machine for the CLI: its own HOME (with ~/.ssh) and config directory. */
export interface CliUser {
  home: string;
  configDir: string;
  env: NodeJS.ProcessEnv;
}

export function cliUser(server: string, extra: Record<string, string> = {}): CliUser {
  const home = mkdtempSync(join(tmpdir(), "kw-cli-home-"));
  mkdirSync(join(home, ".ssh"), { mode: 0o700 });
  const configDir = join(home, ".config", "keyward");
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    TERM: "xterm",
    KEYWARD_SERVER: server,
    KEYWARD_CONFIG_DIR: configDir,
    KEYWARD_NO_BROWSER: "1",
    ...extra,
  };
  return { home, configDir, env };
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Terminal output without colours and cursor moves, for assertions. */
export const plain = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");

/** A running `keyward …`: read its output as it comes, wait for it to end. */
export class CliProcess {
  stdout = "";
  stderr = "";
  readonly done: Promise<CliRun>;
  readonly child: ChildProcess;

  constructor(args: string[], user: CliUser, options: { via?: string[] } = {}) {
    const [cmd, ...pre] = options.via ?? [process.execPath, CLI];
    this.child = spawn(cmd!, [...pre, ...args], { env: user.env, cwd: user.home, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout!.on("data", (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr!.on("data", (d: Buffer) => (this.stderr += d.toString()));
    this.done = new Promise((res) => this.child.on("close", (code) => res({ code, stdout: this.stdout, stderr: this.stderr })));
  }

  /** Waits for `pattern` in stdout+stderr; returns its match. */
  async waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> {
    for (let waited = 0; waited < timeoutMs; waited += 50) {
      const m = pattern.exec(plain(this.stderr)) ?? pattern.exec(plain(this.stdout));
      if (m) return m;
      if (this.child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`keyward never printed ${pattern}: stdout=${this.stdout} stderr=${this.stderr}`);
  }

  write(text: string): void {
    this.child.stdin!.write(text);
  }
}

export const startCli = (args: string[], user: CliUser) => new CliProcess(args, user);
export const runCli = (args: string[], user: CliUser) => {
  const p = new CliProcess(args, user);
  p.child.stdin!.end();
  return p.done;
};

/**
 * `keyward …` on a pseudo-terminal (util-linux `script`), as a person at a terminal runs it:
 * stdin, stdout and stderr are all the terminal, so interactive prompts appear. Output is merged.
 */
export function startCliInPty(args: string[], user: CliUser): CliProcess {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, CLI, ...args].map(quote).join(" ");
  return new CliProcess([], user, { via: ["script", "-qfec", command, "/dev/null"] });
}

/**
 * `keyward login` on the loopback redirect, with the browser played by OidcAgent: sign in, follow
 * the printed address through consent to the CLI's 127.0.0.1 listener, and deliver the answer.
 */
export async function loginWithLoopback(
  origin: string,
  person: { email: string; password: string },
  user: CliUser,
  args: string[] = [],
  browser?: import("./oidc-agent.js").OidcAgent,
): Promise<CliRun & { consentShown: boolean }> {
  const { OidcAgent } = await import("./oidc-agent.js");
  const cli = startCli(["login", ...args], user);
  const [url] = await cli.waitFor(/https?:\/\/\S+\/authorize\?\S+/);
  const redirectUri = new URL(url!).searchParams.get("redirect_uri")!;
  // A given agent is a browser that is already signed in (its session and grants carry over).
  const agent = browser ?? new OidcAgent(origin);
  if (!browser) await agent.signIn(person.email, person.password);
  const stop = await agent.follow(url!, redirectUri);
  if (!stop.url.startsWith(redirectUri)) throw new Error(`authorization stopped at ${stop.url} (${stop.status}): ${stop.body.slice(0, 300)}`);
  const delivered = await fetch(stop.url);
  if (delivered.status !== 200) throw new Error(`the CLI refused its callback: ${delivered.status}`);
  return { ...(await cli.done), consentShown: stop.consentShown };
}
