import { existsSync } from "node:fs";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * Where a tool of ../shared/tools is (`path` below that folder): `given` (its environment variable,
 * as CI exports it) when set, else beside the repository, else under /work/shared/tools; the first
 * place when it is in neither (the caller's "missing" error then names it).
 */
export function sharedTool(given: string | undefined, path: string): string {
  const beside = resolve(ROOT, "../shared/tools", path);
  return given ?? [beside, resolve("/work/shared/tools", path)].find((p) => existsSync(p)) ?? beside;
}
