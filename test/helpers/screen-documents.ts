import { readdirSync, readFileSync } from "node:fs";
import { projectPath } from "../../src/infra/paths.js";

/**
 * A GraphQL document as a web app screen sends it: the `graphql(`…`)` text in `file` (under web/src)
 * whose operation is `name`. Tests that bound a screen's database statements run the screen's own
 * document, so the bound follows the screen when it changes.
 */
export function screenDocument(file: string, name: string): string {
  const source = readFileSync(projectPath("web/src", file), "utf8");
  for (const m of source.matchAll(/graphql\(`([\s\S]*?)`\)/g)) {
    if (new RegExp(`\\b(query|mutation)\\s+${name}\\b`).test(m[1]!)) return m[1]!;
  }
  throw new Error(`no document named ${name} in web/src/${file}`);
}

/** Every GraphQL query of the web app's screens whose one variable is the organization: [file, name, text]. */
export function organizationScreenQueries(): Array<{ file: string; name: string; query: string }> {
  const out: Array<{ file: string; name: string; query: string }> = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(projectPath("web/src", dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) {
        for (const m of readFileSync(projectPath("web/src", rel), "utf8").matchAll(/graphql\(`([\s\S]*?)`\)/g)) {
          const head = /^\s*query\s+(\w+)\s*\(\s*\$orgId:\s*ID!\s*\)/.exec(m[1]!);
          if (head) out.push({ file: rel, name: head[1]!, query: m[1]! });
        }
      }
    }
  };
  walk("");
  return out;
}
