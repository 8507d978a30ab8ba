import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/**
 * postgres-js 3.4.9 (the latest release) can take the whole process down when PostgreSQL goes
 * away under load (porsager/postgres#1066, #1154, #1208; unfixed upstream). A transaction whose
 * connection closes rejects its query; the transaction's own `rollback` is then sent on that
 * closed connection (or on the connection the pool has meanwhile handed to someone else), its
 * write is deferred with setImmediate, and the deferred write dereferences the closed socket:
 * `TypeError: Cannot read properties of null (reading 'write')` from a timer, where no caller can
 * catch it. Two smaller faults sit beside it: closing forgets to reset the deferred-write timer,
 * so the reconnected socket never sends its startup message (a hang of connect_timeout), and
 * a deferred write that finds no socket drops its bytes and leaves the query waiting forever.
 *
 * `npm install` (prepare) and `npm run build` apply these edits to the installed driver, and the
 * service refuses to start on PostgreSQL with a driver that lacks them (see assertPostgresPatched).
 * Each edit is exact text: a driver release that changes any of it fails the patch loudly, and
 * the edits are then re-checked against that release (and dropped once it fixes the bug).
 * test/integration/postgres-driver.test.ts proves each fault on a real server.
 */
export const POSTGRES_VERSION = "3.4.9";
const MARKER = "keyward-patch:1";

interface Edit {
  file: "connection.js" | "index.js";
  why: string;
  find: string;
  replace: string;
}

const EDITS: Edit[] = [
  {
    file: "connection.js",
    why: "a deferred write that finds the socket gone settles its queries with CONNECTION_CLOSED instead of throwing from a timer",
    find: `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`,
    replace: `  function nextWrite(fn) {
    if (!socket) { // ${MARKER}
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options))
      return false
    }
    const x = socket.write(chunk, fn)`,
  },
  {
    file: "connection.js",
    why: "closing drops the dead socket's pending bytes and resets the timer, so the next socket's writes are sent",
    find: `    clearImmediate(nextWriteTimer)
    socket.removeListener('data', data)`,
    replace: `    clearImmediate(nextWriteTimer)
    chunk = nextWriteTimer = null
    socket.removeListener('data', data)`,
  },
  {
    file: "connection.js",
    why: "terminating does the same",
    find: `    clearImmediate(nextWriteTimer)
    if (socket) {`,
    replace: `    clearImmediate(nextWriteTimer)
    chunk = nextWriteTimer = null
    if (socket) {`,
  },
  {
    file: "index.js",
    why: "a transaction remembers that its connection closed",
    find: `    let savepoints = 0
      , connection
      , prepare = null`,
    replace: `    let savepoints = 0
      , connection
      , lost = null
      , prepare = null`,
  },
  {
    file: "index.js",
    why: "(set when the pool reports the close)",
    find: `        new Promise((_, reject) => connection.onclose = reject)`,
    replace: `        new Promise((_, reject) => connection.onclose = e => reject(lost = e || Errors.connection('CONNECTION_CLOSED', options)))`,
  },
  {
    file: "index.js",
    why: "and refuses every later statement (its rollback included) instead of sending it on a connection that is closed or already serves another caller",
    find: `        q.catch(e => uncaughtError || (uncaughtError = e))
        c.queue === full`,
    replace: `        q.catch(e => uncaughtError || (uncaughtError = e))
        if (lost) return q.reject(lost)
        c.queue === full`,
  },
];

/** The driver's source folders: ESM (`src/`, what Node loads here) and CommonJS (`cjs/src/`). */
function driverFolders(): { version: string; folders: string[] } {
  // The package exports no package.json: its CommonJS entry (cjs/src/index.js) leads to the root.
  const root = dirname(dirname(dirname(createRequire(import.meta.url).resolve("postgres"))));
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name: string; version: string };
  if (pkg.name !== "postgres") throw new Error(`expected the postgres package at ${root}`);
  return { version: pkg.version, folders: [join(root, "src"), join(root, "cjs", "src")] };
}

/** Applies the edits to the installed driver (idempotent). Throws when the driver is not the version they were written for. */
export function applyPostgresPatch(): { applied: number; already: number } {
  const { version, folders } = driverFolders();
  if (version !== POSTGRES_VERSION) {
    throw new Error(`postgres ${version} is installed; src/infra/postgres-patch.ts was written for ${POSTGRES_VERSION}: check whether it still needs the edits, and update them`);
  }
  let applied = 0;
  let already = 0;
  for (const folder of folders) {
    for (const file of ["connection.js", "index.js"] as const) {
      const path = join(folder, file);
      let text = readFileSync(path, "utf8");
      const edits = EDITS.filter((e) => e.file === file);
      if (isPatched(text, edits)) {
        already++;
        continue;
      }
      for (const edit of edits) {
        if (text.split(edit.find).length !== 2) throw new Error(`postgres ${version}: ${path} does not hold the text the edit "${edit.why}" replaces exactly once`);
        text = text.replace(edit.find, () => edit.replace);
      }
      writeFileSync(path, text);
      applied++;
    }
  }
  return { applied, already };
}

const isPatched = (text: string, edits: Edit[]) => edits.every((e) => text.includes(e.replace));

/** True when the driver Node loads (the ESM build) carries every edit. */
export function postgresPatched(): boolean {
  const { folders } = driverFolders();
  return (["connection.js", "index.js"] as const).every((file) =>
    isPatched(
      readFileSync(join(folders[0]!, file), "utf8"),
      EDITS.filter((e) => e.file === file),
    ),
  );
}
