import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";

/** Start-up refused for a reason the operator can fix; `main` prints the message alone, no stack. */
export class StartupError extends Error {
  override name = "StartupError";
}

/**
 * An embedded database directory belongs to one process: PGlite has no locking of its own and two
 * processes on one directory corrupt it. The lock is a file holding the owner's pid, created with
 * O_EXCL; a lock whose pid no longer runs is stale (a crash) and is taken over.
 */
export function lockDataDir(dir: string): { release(): void } {
  const file = join(dir, "keyward.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            if (readFileSync(file, "utf8").trim() === String(process.pid)) unlinkSync(file);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const owner = Number.parseInt(readFileSync(file, "utf8"), 10);
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isRunning(owner)) {
        throw new StartupError(
          `The data directory ${resolve(dir)} is in use by another Keyward process (pid ${owner}). ` +
            "Stop that process, or start this one with another DATA_DIR (or a DATABASE_URL).",
        );
      }
      // Stale: its owner is gone. Remove it and try once more (another starter may win the race).
      try {
        unlinkSync(file);
      } catch {
        /* someone else removed it */
      }
    }
  }
  throw new StartupError(`The data directory ${resolve(dir)} is being opened by another process at the same moment: try again.`);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it runs, under another user.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
