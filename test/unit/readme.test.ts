import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * What the README promises about itself and the repository: every `npm run` it names exists,
 * every link inside the repository leads somewhere, it says what Keyward does not do yet, and the
 * benchmark journal lives in docs/benchmarks.md with only the current figures left here.
 */
const DOCS = ["README.md", ...readdirSync("docs").filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const read = (file: string) => readFileSync(file, "utf8");
const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
const anchors = (text: string) => new Set(text.split("\n").filter((l) => /^#+ /.test(l)).map((l) => slug(l.replace(/^#+ /, "").trim())));

/** The lines of one `## ` section, heading excluded. */
function section(text: string, title: string): string {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.trimEnd() === `## ${title}`);
  if (start < 0) throw new Error(`no "## ${title}" section`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  return lines.slice(start + 1, end < 0 ? undefined : end).join("\n");
}

describe("README and docs", () => {
  it("name only npm scripts that package.json has", () => {
    const unknown = DOCS.flatMap((file) => [...read(file).matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]!).filter((name) => !(name in scripts)).map((name) => `${file}: npm run ${name}`));
    expect(unknown).toEqual([]);
  });

  it("link only to files that exist and to headings that exist", () => {
    const broken: string[] = [];
    for (const file of DOCS) {
      const text = read(file);
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split("#");
        const into = path ? join(dirname(file), path) : file;
        if (!existsSync(into)) broken.push(`${file}: ${target}`);
        else if (anchor && into.endsWith(".md") && !anchors(read(into)).has(anchor)) broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("says what Keyward does not do yet", () => {
    const gaps = section(read("README.md"), "What Keyward does not do yet").split("\n").filter((l) => l.startsWith("- **"));
    expect(gaps.length).toBeGreaterThanOrEqual(5);
  });

  it("keeps how to run the benches and the current figures, and the journal in docs/benchmarks.md", () => {
    const bench = section(read("README.md"), "Benchmarks");
    expect(bench).toContain("`npm run bench`");
    expect(bench).toContain("(docs/benchmarks.md)");
    // One table of figures: the current runs.
    expect(bench.split("\n").filter((l) => /^\|[- |]+\|$/.test(l))).toHaveLength(1);
    const journal = read("docs/benchmarks.md");
    // The earlier runs, each named by its commit, are in the journal and no longer in the README.
    for (const commit of ["043b721", "ac96ce4", "0cf72c3", "1478750"]) {
      expect(journal, commit).toContain(commit);
      expect(bench, commit).not.toContain(commit);
    }
    for (const bench of ["bench:memory", "bench:activity", "bench:audit", "bench:networks"]) expect(journal).toContain(`npm run ${bench}`);
  });
});
