import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/** The test files under `dir`, as paths from the project root. */
export const testFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => join(dir, f))
    .sort();

/**
 * `npm run test:quick`: the unit and integration tests that run on any machine with Node.js and
 * OpenSSH's ssh-keygen, on the embedded default (no PostgreSQL, Redis, Chromium, sshd or root).
 * Left out: test/e2e/ (real peers), and the integration files that start a real ZeroTier
 * controller (root, iproute2 and ../shared/tools/zerotier), a real DNS server (dnsmasq and
 * ../shared/tools/dns) or a real SAML IdP (SimpleSAMLphp and ../shared/tools/saml-idp), found by
 * their import of its helper so that a new such file is left out too.
 */
export const NEEDS_CONTROLLER = testFiles("test/integration").filter((file) => readFileSync(file, "utf8").includes("helpers/zerotier.js"));
export const NEEDS_DNS = testFiles("test/integration").filter((file) => readFileSync(file, "utf8").includes("helpers/dns.js"));
export const NEEDS_SAML_IDP = testFiles("test/integration").filter((file) => readFileSync(file, "utf8").includes("helpers/saml-idp.js"));

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/unit/**/*.test.ts", "test/integration/**/*.test.ts"],
    exclude: [...(base.test?.exclude ?? []), ...NEEDS_CONTROLLER, ...NEEDS_DNS, ...NEEDS_SAML_IDP],
  },
});
