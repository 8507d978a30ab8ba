import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";

/**
 * Keyward as a real process (the way `npm start` or `node dist/src/main.js` runs it), on the
 * embedded default whatever the suite's mode: tests of starting, stopping and the compiled build.
 */
export interface ServerProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];

/** Starts `node <args>` with development defaults and no external services; `env` wins. */
export function startServerProcess(args: string[], env: Record<string, string>): ServerProcess {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  delete base.REDIS_URL;
  const child = spawn(process.execPath, args, {
    env: { ...base, NODE_ENV: "development", LOG_LEVEL: "warn", HOST: "127.0.0.1", SMTP_HOST: "127.0.0.1", SMTP_PORT: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  // A process ended by a signal says so in its output (its exit code is then null).
  const exited = new Promise<number | null>((r) =>
    child.once("exit", (code, signal) => {
      if (signal) out += `\n[exited on ${signal}]`;
      r(code);
    }),
  );
  return { child, output: () => out, exited };
}

/** Waits for the start banner (60 s at most); fails with the output when the process exits first. */
export async function untilListening(s: ServerProcess): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (s.output().includes("Keyward is listening")) return;
    if (s.child.exitCode !== null) throw new Error(`exited early:\n${s.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not listening after 60 s:\n${s.output()}`);
}

export async function stopServerProcess(s: ServerProcess): Promise<number | null> {
  if (s.child.exitCode === null) s.child.kill("SIGTERM");
  return s.exited;
}

/** Kills whatever a test file left running (afterAll). */
export function killServerProcesses(): void {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}
