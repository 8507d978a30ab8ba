import { readFileSync } from "node:fs";
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
