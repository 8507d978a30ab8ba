import { chmodSync, readFileSync, renameSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/**
 * Bundles the `keyward` client (src/cli) and its libraries into one file, dist/cli/keyward.mjs,
 * so that it starts fast and runs with nothing but Node: `npm install` runs this (prepare), and
 * package.json's "bin" points at the result. Usage: `npm run build:cli`.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
const { version } = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { version: string };

const out = `${root}dist/cli/keyward.mjs`;
const tmp = `${out}.${process.pid}.tmp`;
await build({
  absWorkingDir: root,
  entryPoints: ["src/cli/keyward.ts"],
  // Written aside and renamed into place: a build running beside another (parallel test files) or
  // beside a running keyward never exposes a half-written file.
  outfile: tmp,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // The CommonJS libraries in the bundle (commander, picocolors) call require() for Node's own
  // modules; an ES module has no require, so the banner makes one.
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as __keywardRequire } from 'node:module';\nconst require = __keywardRequire(import.meta.url);" },
  define: { KEYWARD_VERSION: JSON.stringify(version) },
  legalComments: "none",
  logLevel: "warning",
});
chmodSync(tmp, 0o755);
renameSync(tmp, out);
console.log("built dist/cli/keyward.mjs");
