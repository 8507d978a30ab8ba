import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Issue 34 item 5, inputs declared once: a GraphQL input class `implements GqlInputOf<Self, service,
 * method>`, the zod input of the schema its service parses it with, so that a field that drifts from
 * the schema is a compile error rather than a field zod strips (or refuses) at run time. A file
 * planted among the resolvers' types, with one class right and others drifted, is compiled with the
 * project: tsc reports each drifted class and nothing else, anywhere. Arguments a resolver maps by
 * hand (`loose`, `omitNulls`) are checked where they are passed: a renamed one is reported too.
 */
const ROOT = resolve(import.meta.dirname, "../..");

const PLANTED = [
  `import { Field, InputType } from "type-graphql";`,
  `import type { Services } from "../../container.js";`,
  `import type { RequestContext } from "../../lib/request-context.js";`,
  `import type { GqlInputOf } from "../common/inputs.js";`,
  `import { loose } from "../common/inputs.js";`,
  `import { omitNulls } from "../common/nulls.js";`,
  `@InputType() export class Right implements GqlInputOf<Right, "orgs", "create"> { @Field(() => String) name: string; @Field(() => String, { nullable: true }) slug?: string; }`,
  // slug, renamed: zod would strip it without a word.
  `@InputType() export class Renamed implements GqlInputOf<Renamed, "orgs", "create"> { @Field(() => String) name: string; @Field(() => String, { nullable: true }) urlSlug?: string; }`,
  // name, required by the schema, missing: every call would be a VALIDATION_ERROR.
  `@InputType() export class Missing implements GqlInputOf<Missing, "orgs", "create"> { @Field(() => String, { nullable: true }) slug?: string; }`,
  `@InputType() export class Mistyped implements GqlInputOf<Mistyped, "orgs", "create"> { @Field(() => Number) name: number; }`,
  // Required by the schema, optional here.
  `@InputType() export class Loosened implements GqlInputOf<Loosened, "orgs", "create"> { @Field(() => String, { nullable: true }) name?: string; }`,
  // A String behind a zod enum is what GraphQL can vouch for: it compiles (the service refuses a bad value).
  `@InputType() export class EnumAsString implements GqlInputOf<EnumAsString, "cas", "create"> { @Field(() => String) name: string; @Field(() => String, { nullable: true }) keyType?: string; }`,
  // Arguments mapped by hand are checked at the call: a renamed one does not compile either.
  `export const mapped = (s: Services, ctx: RequestContext) => s.cas.rotate(ctx, "org", "ca", loose({ keyKind: "rsa" }));`,
  `export const withoutNulls = (s: Services, ctx: RequestContext, fullName: string | null) => s.users.updateMe(ctx, omitNulls({ name: fullName }));`,
  `export const rightMapping = (s: Services, ctx: RequestContext, fullName: string | null) => s.users.updateMe(ctx, omitNulls({ fullName }));`,
  "",
].join("\n");

function compile(extra: string[]): ts.Diagnostic[] {
  const config = ts.readConfigFile(join(ROOT, "tsconfig.json"), (f) => ts.sys.readFile(f));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const program = ts.createProgram([...parsed.fileNames.filter((f) => f.startsWith(join(ROOT, "src/"))), ...extra], { ...parsed.options, noEmit: true });
  return [...ts.getPreEmitDiagnostics(program)];
}

describe("GraphQL inputs and the services' zod schemas", () => {
  it("a drifted input class does not compile; the rest of the tree does", () => {
    // Inside the project, next to the real input classes, so that it resolves what they resolve.
    const dir = mkdtempSync(join(ROOT, "src/graphql/planted-input-"));
    try {
      const file = join(dir, "planted.ts");
      writeFileSync(file, PLANTED);
      const diagnostics = compile([file]);
      const where = (d: ts.Diagnostic) => `${d.file ? d.file.fileName : "(global)"}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
      expect(diagnostics.filter((d) => d.file?.fileName !== file).map(where)).toEqual([]);
      const lines = diagnostics.filter((d) => d.file?.fileName === file).map((d) => d.file!.getLineAndCharacterOfPosition(d.start!).line + 1);
      // Renamed (8), Missing (9), Mistyped (10), Loosened (11), the mapped calls (13, 14); not Right (7),
      // EnumAsString (12) nor the right mapping (15).
      expect([...new Set(lines)].sort((a, b) => a - b)).toEqual([8, 9, 10, 11, 13, 14]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
