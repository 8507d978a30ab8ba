import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import quick, { NEEDS_CONTROLLER, NEEDS_DNS, NEEDS_SAML_IDP, testFiles } from "../../vitest.quick.config.js";

/**
 * `npm run test:quick` is the subset that runs anywhere: the unit and integration files on the
 * embedded default, none needing a browser, sshd, root or the ZeroTier tool outside the repository.
 */
const scripts = (JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }).scripts;
/** The files vitest takes with the quick config: its include globs, less its excludes. */
const selected = () => {
  // `**/` is any number of directories, `*` anything within one.
  const glob = (pattern: string) =>
    new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").split("**/").map((part) => part.replace(/\*\*?/g, "[^/]*")).join("(?:.+/)?")}$`);
  const included = quick.test!.include!.map(glob);
  const excluded = quick.test!.exclude!.map(glob);
  return [...testFiles("test/unit"), ...testFiles("test/integration"), ...testFiles("test/e2e")].filter((f) => included.some((re) => re.test(f)) && !excluded.some((re) => re.test(f)));
};

/** What a test file needs from the machine beyond Node.js and ssh-keygen, by the helpers it uses. */
const NEEDS = [/helpers\/browser\.js/, /helpers\/sshd\.js/, /helpers\/zerotier\.js/, /helpers\/dns\.js/, /helpers\/saml-idp\.js/, /helpers\/saml-keys\.js/, /\/usr\/sbin\/sshd/, /playwright/];

describe("npm run test:quick", () => {
  it("runs the quick config on the embedded default, whatever DATABASE_URL and REDIS_URL the shell has", () => {
    expect(scripts["test:quick"]).toBe("DATABASE_URL= REDIS_URL= vitest run --config vitest.quick.config.ts");
  });

  it("takes every unit and integration file but those that start a real ZeroTier controller, DNS server or SAML IdP, and nothing that needs more", () => {
    const files = selected();
    const all = [...testFiles("test/unit"), ...testFiles("test/integration")];
    expect(NEEDS_CONTROLLER).toContain("test/integration/networks.test.ts");
    expect(NEEDS_DNS).toContain("test/integration/domains.test.ts");
    expect(NEEDS_SAML_IDP).toContain("test/integration/saml-idp.test.ts");
    expect(files.sort()).toEqual(all.filter((f) => !NEEDS_CONTROLLER.includes(f) && !NEEDS_DNS.includes(f) && !NEEDS_SAML_IDP.includes(f)).sort());
    expect(files).toContain("test/unit/quick-tests.test.ts");
    expect(files.some((f) => f.startsWith("test/e2e/"))).toBe(false);
    const heavy = files.filter((f) => f !== "test/unit/quick-tests.test.ts" && NEEDS.some((re) => re.test(readFileSync(f, "utf8"))));
    expect(heavy).toEqual([]);
  });
});
