import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The project directory (package.json beside schema/migrations), found from this file whether it runs
 * from src/ or from the compiled dist/src/ (dist/ has a package.json and a schema/ of its own, but no
 * migrations: those, the email templates and the page assets are read from the project directory).
 */
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "schema", "migrations"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

export const PROJECT_ROOT = findRoot();
export const projectPath = (...parts: string[]): string => resolve(PROJECT_ROOT, ...parts);
