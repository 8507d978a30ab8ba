import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { safeEqual } from "../../src/lib/crypto/index.js";

/**
 * A timing test cannot tell `===` from a constant-time comparison on a busy machine (the mutation
 * review replaced safeEqual's body with `===` and the old test stayed green). This one reads what
 * safeEqual is built on from its source (the suite shares modules between files, so node:crypto
 * is not mocked): its answers come from node:crypto's timingSafeEqual, or are a plain `false`
 * after a dummy timingSafeEqual when the lengths differ; the only equality it tests is of lengths.
 */
const FILE = resolve(import.meta.dirname, "../../src/lib/crypto/hash.ts");

function safeEqualSource() {
  const file = ts.createSourceFile(FILE, readFileSync(FILE, "utf8"), ts.ScriptTarget.Latest, true);
  const fn = file.statements.find((s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === "safeEqual");
  const imported = file.statements
    .filter(ts.isImportDeclaration)
    .filter((i) => ts.isStringLiteral(i.moduleSpecifier) && i.moduleSpecifier.text === "node:crypto")
    .flatMap((i) => (i.importClause?.namedBindings && ts.isNamedImports(i.importClause.namedBindings) ? i.importClause.namedBindings.elements : []))
    .map((e) => (e.propertyName ?? e.name).text);
  return { fn: fn!, imported };
}

/** Every node under `root` that `pick` accepts. */
function all<T extends ts.Node>(root: ts.Node, pick: (n: ts.Node) => n is T): T[] {
  const out: T[] = [];
  const visit = (n: ts.Node): void => {
    if (pick(n)) out.push(n);
    ts.forEachChild(n, visit);
  };
  visit(root);
  return out;
}

const callsTimingSafeEqual = (n: ts.Node | undefined): boolean => !!n && ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "timingSafeEqual";

describe("safeEqual", () => {
  it("answers equal and unequal strings, of equal and of different lengths", () => {
    expect(safeEqual("same secret", "same secret")).toBe(true);
    expect(safeEqual("same secret", "same secreT")).toBe(false);
    expect(safeEqual("short", "longer value")).toBe(false);
    expect(safeEqual("", "x")).toBe(false);
  });

  it("is built on node:crypto's timingSafeEqual: each answer is its result, or false after a dummy one", () => {
    const { fn, imported } = safeEqualSource();
    expect(fn, "safeEqual is a function declaration in src/lib/crypto/hash.ts").toBeDefined();
    expect(imported).toContain("timingSafeEqual");
    const returns = all(fn.body!, ts.isReturnStatement).map((r) => r.expression);
    expect(returns.length).toBeGreaterThan(0);
    for (const value of returns) expect(callsTimingSafeEqual(value) || value?.kind === ts.SyntaxKind.FalseKeyword, value?.getText()).toBe(true);
    // An early `return false` (on a length mismatch) comes after a dummy comparison in the same block.
    for (const early of all(fn.body!, ts.isReturnStatement).filter((r) => r.expression?.kind === ts.SyntaxKind.FalseKeyword)) {
      const block = early.parent as ts.Block;
      const before = block.statements.slice(0, block.statements.indexOf(early));
      expect(before.some((s) => ts.isExpressionStatement(s) && callsTimingSafeEqual(s.expression)), "a dummy timingSafeEqual before `return false`").toBe(true);
    }
  });

  it("tests no equality but of lengths", () => {
    const { fn } = safeEqualSource();
    const equalities = all(fn.body!, ts.isBinaryExpression).filter((b) =>
      [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken].includes(b.operatorToken.kind),
    );
    for (const e of equalities) {
      for (const side of [e.left, e.right]) expect(ts.isPropertyAccessExpression(side) && side.name.text === "length", e.getText()).toBe(true);
    }
  });
});
