import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * ARCHITECTURE rule 8: secrets are compared in constant time. `===` returns at the first differing
 * character, so comparing a presented token, hash, signature or code with `===` leaks how much of
 * it was right. Every equality operator in the server is read from the source: one whose operands
 * are both computed values (no literal or named constant on either side) and one of which is named
 * like a secret must go through safeEqual (src/lib/crypto), or be listed below with why it is not
 * a secret. The listed ones are checked to still exist, so the list cannot go stale.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const DIRS = ["src", "rest-shim"];
const SECRET_NAME = /hash|token|secret|signature|digest|code/i;
const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

/** Comparisons that name a secret-like value but compare no credential: where, which, and why. */
const NOT_SECRETS: { file: string; expression: RegExp; why: string }[] = [
  {
    file: "src/modules/audit/chain-walk.ts",
    expression: /^(r|prev)\.(hash|prevHash) [!=]== (prev\.hash|head\.hash|linkHash\(.*\))$/,
    why: "audit chain links are digests of audit rows, public integrity values (signed heads, exports) that nobody presents to be let in",
  },
  {
    file: "src/modules/domains/domains.service.ts",
    expression: /^current\.verificationToken !== row\.verificationToken$/,
    why: "a domain's verification token is published in DNS by design; the service compares the row it read before a lookup with the row it locked after, to see whether the claim was made anew",
  },
  {
    file: "src/lib/saml/decrypt.ts",
    expression: /^digest === mgf$/,
    why: "two algorithm names read from an EncryptedKey (its OAEP digest and MGF1 hash), compared to pick an allowed pair; neither is a secret",
  },
  {
    file: "src/cli/session.ts",
    expression: /^(creds|latest)\.accessToken !== (refused|creds\.accessToken)$/,
    why: "the command-line client compares tokens it stored itself, to see whether another process refreshed them; nothing is granted on it",
  },
  {
    file: "src/modules/email/render.ts",
    expression: /^built\.hash === sourcesHash\(sources\)$/,
    why: "a digest of the email templates' MJML sources, compared to see whether the build's compilation of them is current; nobody presents it",
  },
];
/** Whether a finding ("file:line: expression") is the listed exception. */
const isException = (finding: string, { file, expression }: (typeof NOT_SECRETS)[number]) =>
  finding.startsWith(`${file}:`) && expression.test(finding.slice(finding.indexOf(": ") + 2));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

const unwrap = (n: ts.Expression): ts.Expression =>
  ts.isParenthesizedExpression(n) || ts.isNonNullExpression(n) || ts.isAsExpression(n) || ts.isTypeAssertionExpression(n) ? unwrap(n.expression) : n;

/** A side that is fixed in the source: a literal, undefined, a SCREAMING_CASE constant, typeof, a length. */
function isFixed(side: ts.Expression): boolean {
  const n = unwrap(side);
  if (ts.isLiteralExpression(n) || ts.isNoSubstitutionTemplateLiteral(n)) return true;
  if (n.kind === ts.SyntaxKind.NullKeyword || n.kind === ts.SyntaxKind.TrueKeyword || n.kind === ts.SyntaxKind.FalseKeyword) return true;
  if (ts.isPrefixUnaryExpression(n)) return isFixed(n.operand);
  if (ts.isTypeOfExpression(n) || ts.isVoidExpression(n)) return true;
  if (ts.isIdentifier(n)) return n.text === "undefined" || /^[A-Z][A-Z0-9_]*$/.test(n.text);
  if (ts.isPropertyAccessExpression(n)) return ["length", "size", "byteLength"].includes(n.name.text) || /^[A-Z][A-Z0-9_]*$/.test(n.name.text);
  return false;
}

/** The name a side is known by: `x`, `row.tokenHash`'s tokenHash, `sha256Hex(…)`'s sha256Hex. */
function nameOf(side: ts.Expression): string | undefined {
  const n = unwrap(side);
  if (ts.isIdentifier(n)) return n.text;
  if (ts.isPropertyAccessExpression(n)) return n.name.text;
  if (ts.isElementAccessExpression(n) || ts.isCallExpression(n)) return nameOf(n.expression);
  return undefined;
}

/** Equality comparisons between two computed values, one of them named like a secret. */
function secretComparisons(fileName: string, text: string): string[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind) && !isFixed(node.left) && !isFixed(node.right)) {
      if ([node.left, node.right].some((side) => SECRET_NAME.test(nameOf(side) ?? ""))) {
        const line = file.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        found.push(`${fileName}:${line}: ${node.getText()}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe("secret comparisons", () => {
  const all = DIRS.flatMap((d) => sources(join(ROOT, d))).flatMap((path) => secretComparisons(relative(ROOT, path), readFileSync(path, "utf8")));

  it("go through safeEqual everywhere in the server", () => {
    expect(all.filter((f) => !NOT_SECRETS.some((e) => isException(f, e)))).toEqual([]);
  });

  it("lists as exceptions only files that still compare such values", () => {
    for (const e of NOT_SECRETS) expect(all.some((f) => isException(f, e)), e.file).toBe(true);
  });

  it("catches a planted `===` on a token hash, and not the same comparison through safeEqual", () => {
    const planted = [
      'import { safeEqual, sha256Hex } from "../../lib/crypto/index.js";',
      "export function check(row: { tokenHash: string }, presented: string, code: string, expected: string) {",
      "  if (row.tokenHash === sha256Hex(presented)) return true;",
      "  if (code !== expected) return false;",
      "  return safeEqual(row.tokenHash, sha256Hex(presented)) && row.tokenHash !== undefined && code.length === 6;",
      "}",
    ].join("\n");
    expect(secretComparisons("planted.ts", planted)).toEqual([
      "planted.ts:3: row.tokenHash === sha256Hex(presented)",
      "planted.ts:4: code !== expected",
    ]);
  });
});
