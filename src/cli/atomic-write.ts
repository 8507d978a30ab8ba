import { chmodSync, closeSync, existsSync, fsyncSync, lstatSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeSync } from "node:fs";

/**
 * A file written aside and renamed over the old one: a reader (ssh) sees the old file or the new
 * one, never half of either. Unchanged content is not rewritten. Returns whether it changed.
 */
export function writeAtomic(path: string, content: string, mode = 0o600): boolean {
  const target = existsSync(path) && lstatSync(path).isSymbolicLink() ? realpathSync(path) : path;
  if (existsSync(target) && readFileSync(target, "utf8") === content) {
    if ((statSync(target).mode & 0o777) !== mode) chmodSync(target, mode);
    return false;
  }
  const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
  const fd = openSync(tmp, "wx", mode);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  chmodSync(tmp, mode);
  renameSync(tmp, target);
  return true;
}

