import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { ERROR_STATUS } from "../../src/lib/error-codes.js";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * ARCHITECTURE rule 3: one HTTP status per error code. A client (the CLI, the web app, a script)
 * decides what to do from the code; a code that answers 400 here and 401 there is read wrongly
 * somewhere (a bad invitation link once looked like an expired session to the web app and signed
 * it out). Every `new AppError(code, status, …)` in the server is read from the source: the code
 * must be a string literal (or a parameter typed as a union of them) and the status a number
 * literal, so that this table is complete; a construction it cannot read fails the test.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const DIRS = ["src", "rest-shim"];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

interface Declaration {
  code: string;
  status: number;
  where: string;
}

/** The string literals a parameter's type annotation allows (`code: "A" | "B"`), if that is all it allows. */
function literalUnion(node: ts.TypeNode | undefined): string[] | null {
  if (!node) return null;
  const members = ts.isUnionTypeNode(node) ? node.types : [node];
  const out: string[] = [];
  for (const m of members) {
    if (!ts.isLiteralTypeNode(m) || !ts.isStringLiteral(m.literal)) return null;
    out.push(m.literal.text);
  }
  return out;
}

/** The parameter named `name` of the nearest function around `node`. */
function parameter(node: ts.Node, name: string): ts.ParameterDeclaration | undefined {
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) {
    if (ts.isFunctionLike(n)) {
      const p = n.parameters.find((x) => ts.isIdentifier(x.name) && x.name.text === name);
      if (p) return p;
    }
  }
  return undefined;
}

function declarations(): { found: Declaration[]; unreadable: string[] } {
  const found: Declaration[] = [];
  const unreadable: string[] = [];
  for (const file of DIRS.flatMap((d) => sources(join(ROOT, d)))) {
    const text = readFileSync(file, "utf8");
    if (!text.includes("new AppError(")) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "AppError") {
        const where = `${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
        const [code, status] = node.arguments ?? [];
        const codes = !code
          ? null
          : ts.isStringLiteral(code) || ts.isNoSubstitutionTemplateLiteral(code)
            ? [code.text]
            : ts.isIdentifier(code)
              ? literalUnion(parameter(node, code.text)?.type)
              : null;
        if (!codes || !status || !ts.isNumericLiteral(status)) unreadable.push(`${where}: ${node.getText(source).slice(0, 100)}`);
        else for (const c of codes) found.push({ code: c, status: Number(status.text), where });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { found, unreadable };
}

describe("error declarations", () => {
  const { found, unreadable } = declarations();

  it("are all readable: a literal code (or a parameter typed as literals) and a literal status", () => {
    expect(unreadable).toEqual([]);
    // The scan sees the whole server (a broken scan would pass the next test vacuously).
    expect(new Set(found.map((d) => d.code)).size).toBeGreaterThan(100);
  });

  it("give each code exactly one HTTP status", () => {
    const byCode = new Map<string, Declaration[]>();
    for (const d of found) byCode.set(d.code, [...(byCode.get(d.code) ?? []), d]);
    const conflicts = [...byCode].filter(([, ds]) => new Set(ds.map((d) => d.status)).size > 1).map(([code, ds]) => `${code}: ${ds.map((d) => `${d.status} at ${d.where}`).join(", ")}`);
    expect(conflicts).toEqual([]);
  });

  it("answer 4xx for what a person can fix: no CA yet is CA_NOT_CONFIGURED 404, not a 503 that pages the on-call", () => {
    const status = (code: string) => new Set(found.filter((d) => d.code === code).map((d) => d.status));
    expect(status("CA_NOT_CONFIGURED")).toEqual(new Set([404]));
    // The codes that once carried two statuses, each with its one now.
    expect(status("INVALID_TOKEN")).toEqual(new Set([401]));
    expect(status("INVALID_LINK")).toEqual(new Set([400]));
    expect(status("OAUTH_ERROR")).toEqual(new Set([502]));
    expect(status("OAUTH_CANCELLED")).toEqual(new Set([400]));
    expect(status("AUTH_FAILED")).toEqual(new Set([403]));
  });

  it("are the codes of ERROR_STATUS, each at its status there: the table names no code nothing answers with", () => {
    const table = ERROR_STATUS as Record<string, number>;
    expect(found.filter((d) => table[d.code] !== d.status).map((d) => `${d.code} ${d.status} at ${d.where}`)).toEqual([]);
    // INTERNAL_ERROR is what anything unexpected becomes; the others are all declared somewhere.
    const declared = new Set(found.map((d) => d.code));
    expect(Object.keys(table).filter((c) => !declared.has(c))).toEqual([]);
  });

  it("do not compile with a status other than the code's, or a code the table lacks", () => {
    const dir = mkdtempSync(join(tmpdir(), "keyward-planted-error-"));
    try {
      const file = join(dir, "planted.ts");
      const errors = JSON.stringify(join(ROOT, "src/lib/errors.js"));
      writeFileSync(
        file,
        `import { AppError } from ${errors};\n` +
          `export const right = new AppError("ORG_NOT_FOUND", 404, "ok");\n` +
          `export const wrongStatus = new AppError("ORG_NOT_FOUND", 400, "no");\n` +
          `export const unknownCode = new AppError("NOT_A_CODE", 400, "no");\n`,
      );
      const program = ts.createProgram([file], { strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, noEmit: true, skipLibCheck: true, types: [] });
      const lines = ts
        .getPreEmitDiagnostics(program)
        .filter((d) => d.file?.fileName === file)
        .map((d) => d.file!.getLineAndCharacterOfPosition(d.start!).line + 1);
      expect(lines.sort()).toEqual([3, 4]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
