import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * Every custom property a stylesheet uses is defined: an undefined `var(--x)` makes the property
 * invalid, and the account console's danger buttons once rendered with no background and no border
 * at all (`var(--error)`, never defined): "Turn off the authenticator app" and "Sign out everywhere"
 * were invisible. Definitions may come from any of the stylesheets a page loads.
 */
const SHEETS = ["src/pages/assets/tokens.css", "src/pages/assets/keyward.css"];
const read = (path: string) => readFileSync(path, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");

describe("stylesheets", () => {
  it("use only custom properties they define", () => {
    const css = SHEETS.map(read).join("\n");
    const defined = new Set([...css.matchAll(/(--[\w-]+)\s*:/g)].map((m) => m[1]!));
    const used = new Set([...css.matchAll(/var\(\s*(--[\w-]+)\s*[,)]/g)].map((m) => m[1]!));
    expect([...used].filter((name) => !defined.has(name))).toEqual([]);
    expect(used.size).toBeGreaterThan(10);
  });
});
