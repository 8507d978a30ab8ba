import { globSync, readFileSync } from "node:fs";
import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * `npm run test:quick`: the unit and integration tests that run on any machine with Node.js and
 * OpenSSH's ssh-keygen, on the embedded default (no PostgreSQL, Redis, Chromium, sshd or root).
 * Left out: test/e2e/ (real peers), and the integration files that start a real ZeroTier
 * controller (root, iproute2 and ../shared/tools/zerotier), found by their import of its helper
 * so that a new such file is left out too.
 */
export const NEEDS_CONTROLLER = globSync("test/integration/**/*.test.ts").filter((file) => readFileSync(file, "utf8").includes("helpers/zerotier.js"));

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/unit/**/*.test.ts", "test/integration/**/*.test.ts"],
    exclude: [...(base.test?.exclude ?? []), ...NEEDS_CONTROLLER],
  },
});
