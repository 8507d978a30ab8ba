import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The import graph of the server's code (src/ and rest-shim/), read the way the compiler reads it
 * (static, dynamic and type-only imports and re-exports alike): no file takes part in a circle, and
 * every import goes down the layers below. A module that needs something of a module above it
 * declares what it needs (an interface, a port) and the container wires it (see UsersDeps,
 * Offboarding).
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Areas, lowest first: an area imports from its own and lower ones only. */
const AREAS: string[][] = [
  ["src/lib"],
  ["src/infra"],
  ["src/config"],
  ["src/modules"],
  ["src/container.ts"],
  ["src/http"],
  ["src/pages"],
  ["src/oidc", "src/graphql"],
  ["rest-shim"],
  ["src/server.ts", "src/jobs", "src/cluster.ts"],
  ["src/tasks", "src/serve.ts"],
  ["src/main.ts"],
];

/**
 * The modules of src/modules, lowest first: the access core at the bottom (it imports no other
 * module), the audit trail that every module records into just above it.
 */
const MODULES: string[] = [
  "access",
  "audit",
  "module-deps.ts",
  "rate-limit",
  "keys",
  "health",
  "email",
  "contact",
  "users",
  "auth",
  "orgs",
  "domains",
  "api-keys",
  "ssh-keys",
  "oidc-clients",
  "networks",
  "access-requests",
  "ssh-ca",
  "ssh-hosts",
  "offboarding",
  "admin",
  "external-auth",
  "sso",
  "scim",
];

/** The command-line client is bundled on its own and imports nothing else (the linter checks that). */
const OUTSIDE = ["src/cli"];

function sources(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) out.push(relative(ROOT, path));
    }
  };
  walk(join(ROOT, "src"));
  walk(join(ROOT, "rest-shim"));
  return out.filter((f) => !OUTSIDE.some((o) => f.startsWith(`${o}/`)));
}

/** Project files each file imports (relative specifiers, resolved to their .ts file). */
function graph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(join(ROOT, file), "utf8"), true, true);
    const targets = info.importedFiles
      .map((i) => i.fileName)
      .filter((s) => s.startsWith("."))
      .map((s) => relative(ROOT, resolve(dirname(join(ROOT, file)), s)).replace(/\.js$/, ".ts"))
      .map((t) => (known.has(t) ? t : known.has(`${t}.ts`) ? `${t}.ts` : known.has(`${t}/index.ts`) ? `${t}/index.ts` : t));
    edges.set(file, [...new Set(targets)]);
  }
  return edges;
}

/** Strongly connected components with more than one file (Tarjan): the circles. */
function circles(edges: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

const areaOf = (file: string): number => AREAS.findIndex((names) => names.some((a) => file === a || file.startsWith(`${a}/`)));
const moduleOf = (file: string): string | undefined => (file.startsWith("src/modules/") ? file.slice("src/modules/".length).split("/")[0] : undefined);

/** Imports that go up: to a higher area, or within src/modules to a module ranked above. */
function upward(edges: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [from, targets] of edges) {
    for (const to of targets) {
      if (!edges.has(to)) continue;
      const [a, b] = [areaOf(from), areaOf(to)];
      if (b > a) found.push(`${from} -> ${to}`);
      const [m, n] = [moduleOf(from), moduleOf(to)];
      if (m && n && m !== n && MODULES.indexOf(n) > MODULES.indexOf(m)) found.push(`${from} -> ${to}`);
    }
  }
  return found;
}

describe("the import graph of src/ and rest-shim/", () => {
  const files = sources();
  const edges = graph(files);

  it("places every file in an area and every module in the order", () => {
    expect(files.filter((f) => areaOf(f) < 0)).toEqual([]);
    const modules = new Set(files.map(moduleOf).filter((m): m is string => m !== undefined));
    expect([...modules].filter((m) => !MODULES.includes(m))).toEqual([]);
    expect(MODULES.filter((m) => !modules.has(m))).toEqual([]);
  });

  it("has no circle, between modules or inside one", () => {
    expect(circles(edges)).toEqual([]);
  });

  it("has no upward import", () => {
    expect(upward(edges)).toEqual([]);
  });

  it("keeps the access core free of every other module, and the audit trail free of all but it", () => {
    const imports = (module: string) =>
      [...edges].flatMap(([from, targets]) => (moduleOf(from) === module ? targets.map(moduleOf).filter((m) => m && m !== module) : []));
    expect(imports("access")).toEqual([]);
    expect(new Set(imports("audit"))).toEqual(new Set(["access"]));
  });

  it("would see a planted circle and a planted upward import", () => {
    const planted = new Map(edges);
    planted.set("src/modules/access/guards.ts", [...(edges.get("src/modules/access/guards.ts") ?? []), "src/modules/access/org-access.ts"]);
    expect(circles(planted)).toContainEqual(["src/modules/access/guards.ts", "src/modules/access/org-access.ts"]);
    planted.set("src/modules/audit/audit.service.ts", ["src/modules/orgs/index.ts"]);
    planted.set("src/config/index.ts", ["src/modules/networks/index.ts"]);
    expect(upward(planted)).toEqual(expect.arrayContaining(["src/modules/audit/audit.service.ts -> src/modules/orgs/index.ts", "src/config/index.ts -> src/modules/networks/index.ts"]));
  });
});
