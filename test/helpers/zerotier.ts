import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { createControllerClient, type ControllerClient } from "../../src/modules/networks/controller/index.js";

/**
 * A REAL ZeroTier network controller (ZeroTierOne 1.14.1, ../shared/tools/zerotier), sealed in its
 * own network namespace, its API bridged to a loopback port. Needs root and iproute2 (CI has both).
 * ZEROTIER_TOOL points at controller.mjs when the tool is not at the default place.
 */
export const ZEROTIER_TOOL = process.env.ZEROTIER_TOOL ?? "/work/shared/tools/zerotier/controller.mjs";

export interface RealController {
  url: string;
  token: string;
  address: string;
  home: string;
  pid: number;
  port: number;
  /** A client of its API (used by tests to create networks and act "behind Keyward's back"). */
  client: ControllerClient;
  /** SIGSTOP / SIGCONT of the controller (its API stops answering, then resumes). */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
  /** Stops it and starts another on the same home and port: networks and members survive. */
  restart(): Promise<void>;
}

export async function startZeroTierController(opts: { home?: string; port?: number } = {}): Promise<RealController> {
  if (!existsSync(ZEROTIER_TOOL)) throw new Error(`The ZeroTier controller tool is missing at ${ZEROTIER_TOOL}: set ZEROTIER_TOOL to ../shared/tools/zerotier/controller.mjs`);
  const home = opts.home ?? mkdtempSync(join(tmpdir(), "kw-zt-"));
  seedIdentity(home);
  let child: ChildProcess;
  let info: { url: string; token: string; address: string; pid: number };

  const launch = async (port?: number) => {
    child = spawn(process.execPath, [ZEROTIER_TOOL, "--home", home, ...(port ? ["--port", String(port)] : [])], { stdio: ["pipe", "pipe", "inherit"] });
    const spawned = child;
    info = await new Promise((resolve, reject) => {
      let done = false;
      const finish = (err: Error | null, value?: typeof info) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value!);
      };
      const timer = setTimeout(() => finish(new Error("the ZeroTier controller did not start within 30 s")), 30_000);
      spawned.once("exit", (code) => finish(new Error(`the ZeroTier controller exited (${code}) before it answered`)));
      createInterface({ input: spawned.stdout! }).once("line", (line) => finish(null, JSON.parse(line)));
      // On a restart the home already holds the token, so the tool probes at once and its probe (no
      // timeout of its own) can hang on a daemon still starting: ask the API ourselves as well.
      if (port && info) {
        const known = info;
        void (async () => {
          while (!done) {
            await new Promise((r) => setTimeout(r, 200));
            try {
              const res = await fetch(`${known.url}/status`, { headers: { "x-zt1-auth": known.token }, signal: AbortSignal.timeout(1000) });
              if (res.ok) finish(null, { ...known, pid: spawned.pid! });
            } catch {
              /* not up yet */
            }
          }
        })();
      }
    });
  };
  const stopChild = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      try {
        process.kill(info.pid, "SIGCONT");
      } catch {
        /* already gone */
      }
      child.kill("SIGTERM");
    });

  /**
   * Starts the controller, trying again on failure: two controllers starting at the same moment can
   * race for a free port, and on a loaded machine the daemon can miss the tool's 10 s readiness
   * window. Before each try the previous daemon on this home must be gone (it holds the home).
   */
  const launchWithRetry = async (port?: number) => {
    for (let attempt = 1; ; attempt++) {
      await homeReleased(home);
      try {
        return await launch(port);
      } catch (e) {
        child?.kill("SIGKILL");
        if (attempt === 3) throw e;
      }
    }
  };
  await launchWithRetry(opts.port);
  const port = Number(new URL(info!.url).port);
  const controller: RealController = {
    get url() {
      return info.url;
    },
    get token() {
      return info.token;
    },
    get address() {
      return info.address;
    },
    get pid() {
      return info.pid;
    },
    home,
    port,
    get client() {
      return createControllerClient({ mode: "controller", baseUrl: info.url, token: info.token }, { maxRetries: 0 });
    },
    pause: () => process.kill(info.pid, "SIGSTOP"),
    resume: () => process.kill(info.pid, "SIGCONT"),
    stop: stopChild,
    async restart() {
      await stopChild();
      await launchWithRetry(port);
    },
  };
  return controller;
}

/** Waits (up to 10 s) until no daemon of an earlier start still runs on this home. */
async function homeReleased(home: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      execFileSync("pgrep", ["-f", "--", `--inner --home ${home}$`], { stdio: "ignore" });
    } catch {
      return; // pgrep exits 1: nothing matches
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A new controller first generates its identity (a deliberately slow proof of work: ~1 s on an idle
 * core, many on a loaded CI machine), inside the tool's 10 s readiness window. Tests give every
 * controller a copy of one identity made once per machine instead: each runs sealed in its own
 * network namespace, so sharing an address is harmless.
 */
function seedIdentity(home: string): void {
  if (existsSync(join(home, "identity.secret"))) return;
  const cache = join(tmpdir(), `kw-zt-identity-${process.getuid?.() ?? 0}`);
  if (!existsSync(join(cache, "identity.secret"))) {
    const scratch = mkdtempSync(join(tmpdir(), "kw-zt-id-"));
    execFileSync(join(dirname(ZEROTIER_TOOL), "zerotier-one"), ["-i", "generate", join(scratch, "identity.secret"), join(scratch, "identity.public")], { stdio: "ignore" });
    // The pair appears at once (a directory rename is atomic); a concurrent run that got there first wins.
    try {
      renameSync(scratch, cache);
    } catch {
      /* the cache exists */
    }
  }
  for (const f of ["identity.public", "identity.secret"]) copyFileSync(join(cache, f), join(home, f));
}
