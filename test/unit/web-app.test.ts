import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { projectPath } from "../../src/infra/paths.js";
import { WEB_DIR } from "../../src/pages/web-app.js";

/**
 * The web app's build-time guarantees (issue 32): every GraphQL document in web/ is checked against
 * schema.graphql (a planted query for a field the schema lacks fails the check, which `npm run
 * typecheck` and CI run), and the first load's JavaScript stays under 250 KB gzipped.
 */
const run = promisify(execFile);
const gqlTada = projectPath("node_modules/gql.tada/bin/cli.js");

describe("the web app's typed GraphQL documents", () => {
  it("pass the schema check, and a planted field the schema lacks fails it", async () => {
    expect((await run(process.execPath, [gqlTada, "check", "--tsconfig", projectPath("web/tsconfig.json")], { cwd: projectPath() })).stdout).toMatch(/No problems found/);

    // A document written the way the app writes them, in a project of its own beside the app's.
    const dir = mkdtempSync(join(tmpdir(), "keyward-planted-"));
    try {
      writeFileSync(
        join(dir, "tsconfig.json"),
        JSON.stringify({
          extends: projectPath("web/tsconfig.json"),
          compilerOptions: { plugins: [{ name: "gql.tada/ts-plugin", schema: projectPath("schema.graphql"), tadaOutputLocation: projectPath("web/src/graphql-env.d.ts") }] },
          include: ["planted.ts"],
        }),
      );
      writeFileSync(join(dir, "planted.ts"), `import { graphql } from ${JSON.stringify(projectPath("web/src/graphql"))};\nexport const Planted = graphql(\`query Planted { me { id emailAddress } }\`);\n`);
      const planted = await run(process.execPath, [gqlTada, "check", "--tsconfig", join(dir, "tsconfig.json")], { cwd: dir }).then(
        () => ({ code: 0, out: "" }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
      );
      expect(planted.code).not.toBe(0);
      expect(planted.out).toContain('Cannot query field "emailAddress" on type "Me"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("the web app's build", () => {
  it("loads at most 250 KB of JavaScript, gzipped, on the first visit", () => {
    expect(existsSync(join(WEB_DIR, "index.html")), "dist/web is built by npm install (npm run build:web)").toBe(true);
    const html = readFileSync(join(WEB_DIR, "index.html"), "utf8");
    const scripts = [...html.matchAll(/<script[^>]+src="\/(_app\/[^"]+\.js)"/g)].map((m) => m[1]!);
    const preloads = [...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="\/(_app\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    const gzipped = [...scripts, ...preloads].reduce((sum, f) => sum + gzipSync(readFileSync(join(WEB_DIR, f)), { level: 9 }).length, 0);
    console.log(`web app first load: ${(gzipped / 1024).toFixed(1)} KB of JavaScript gzipped (${readdirSync(join(WEB_DIR, "_app")).length} files built)`);
    expect(gzipped).toBeLessThan(250 * 1024);
  });
});
