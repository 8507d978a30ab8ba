import { chmodSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/**
 * Bundles the `keyward` client (src/cli) and its libraries into one file, dist/cli/keyward.mjs,
 * so that it starts fast and runs with nothing but Node: `npm install` runs this (prepare), and
 * package.json's "bin" points at the result. Usage: `npm run build:cli`.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
const { version } = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { version: string };

await build({
  absWorkingDir: root,
  entryPoints: ["src/cli/keyward.ts"],
  outfile: "dist/cli/keyward.mjs",
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
chmodSync(`${root}dist/cli/keyward.mjs`, 0o755);
console.log("built dist/cli/keyward.mjs");
