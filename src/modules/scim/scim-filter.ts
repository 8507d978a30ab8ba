import { ScimErrors } from "./scim.errors.js";

/**
 * SCIM filters (RFC 7644 §3.4.2.2): parsed into a tree, then evaluated on the resource as it is
 * answered. Attribute paths are resolved case-insensitively against the attributes a resource type
 * declares filterable; anything else is `invalidFilter`, never a 500. Bounded: a filter is at most
 * MAX_FILTER_LENGTH characters and nests at most MAX_DEPTH levels.
 */
export const MAX_FILTER_LENGTH = 2048;
const MAX_DEPTH = 16;

export type CompareOp = "eq" | "ne" | "co" | "sw" | "ew" | "gt" | "ge" | "lt" | "le";
export type Literal = string | number | boolean | null;

export type Filter =
  | { kind: "and" | "or"; left: Filter; right: Filter }
  | { kind: "not"; filter: Filter }
  | { kind: "present"; path: string }
  | { kind: "compare"; path: string; op: CompareOp; value: Literal }
  /** `emails[type eq "work"]`: some element of a multi-valued attribute matches the inner filter. */
  | { kind: "valuePath"; path: string; filter: Filter };

/** What a resource type lets filters (and PATCH paths) name: canonical paths by lower-cased alias. */
export interface AttributeCatalog {
  /** Canonical attribute paths, e.g. "userName", "name.givenName", "emails.value". */
  paths: readonly string[];
  /** Schema URNs whose prefix ("urn:…:User:") may precede an attribute path. */
  schemas: readonly string[];
  /** Attributes compared case-sensitively (RFC 7643 caseExact: id, externalId). */
  caseExact: readonly string[];
}

const COMPARE_OPS = new Set<string>(["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"]);

type Token = { t: "(" | ")" | "[" | "]" } | { t: "word"; v: string } | { t: "literal"; v: Literal };

/** A bare word: true, false, null, a number, or an attribute path / operator. */
function wordToken(word: string): Token {
  const lower = word.toLowerCase();
  if (lower === "true" || lower === "false") return { t: "literal", v: lower === "true" };
  if (lower === "null") return { t: "literal", v: null };
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(word)) return { t: "literal", v: Number(word) };
  return { t: "word", v: word };
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
    } else if (c === "(" || c === ")" || c === "[" || c === "]") {
      tokens.push({ t: c });
      i++;
    } else if (c === '"') {
      // A JSON string: its escapes are JSON's.
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (j >= text.length) throw ScimErrors.invalidFilter("unterminated string");
      try {
        tokens.push({ t: "literal", v: JSON.parse(text.slice(i, j + 1)) as string });
      } catch {
        throw ScimErrors.invalidFilter("malformed string");
      }
      i = j + 1;
    } else {
      const m = /^[A-Za-z0-9_:.$+-]+/.exec(text.slice(i, i + 512));
      if (!m) throw ScimErrors.invalidFilter(`unexpected character ${JSON.stringify(c)}`);
      tokens.push(wordToken(m[0]));
      i += m[0].length;
    }
  }
  return tokens;
}

/** Resolves an attribute path (maybe URN-prefixed, any case) to its canonical form, or undefined. */
export function resolvePath(catalog: AttributeCatalog, raw: string, parent?: string): string | undefined {
  let path = raw;
  const lower = raw.toLowerCase();
  for (const urn of catalog.schemas) {
    if (lower.startsWith(`${urn.toLowerCase()}:`)) {
      path = raw.slice(urn.length + 1);
      break;
    }
  }
  if (path.toLowerCase().startsWith("urn:")) return undefined;
  const full = (parent ? `${parent}.${path}` : path).toLowerCase();
  return catalog.paths.find((p) => p.toLowerCase() === full);
}

class Parser {
  private i = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly catalog: AttributeCatalog,
  ) {}

  parse(): Filter {
    const f = this.or(0, undefined);
    if (this.i < this.tokens.length) throw ScimErrors.invalidFilter("unexpected text after the filter");
    return f;
  }

  private peekWord(): string | undefined {
    const t = this.tokens[this.i];
    return t?.t === "word" ? t.v.toLowerCase() : undefined;
  }

  private expect(t: "(" | ")" | "]"): void {
    if (this.tokens[this.i]?.t !== t) throw ScimErrors.invalidFilter(`expected "${t}"`);
    this.i++;
  }

  private or(depth: number, parent: string | undefined): Filter {
    let left = this.and(depth, parent);
    while (this.peekWord() === "or") {
      this.i++;
      left = { kind: "or", left, right: this.and(depth, parent) };
    }
    return left;
  }

  private and(depth: number, parent: string | undefined): Filter {
    let left = this.unary(depth, parent);
    while (this.peekWord() === "and") {
      this.i++;
      left = { kind: "and", left, right: this.unary(depth, parent) };
    }
    return left;
  }

  private unary(depth: number, parent: string | undefined): Filter {
    if (depth > MAX_DEPTH) throw ScimErrors.invalidFilter("nested too deeply");
    const t = this.tokens[this.i];
    if (!t) throw ScimErrors.invalidFilter("unexpected end");
    if (t.t === "(") {
      this.i++;
      const f = this.or(depth + 1, parent);
      this.expect(")");
      return f;
    }
    if (t.t === "word" && t.v.toLowerCase() === "not" && this.tokens[this.i + 1]?.t === "(") {
      this.i += 2;
      const f = this.or(depth + 1, parent);
      this.expect(")");
      return { kind: "not", filter: f };
    }
    if (t.t !== "word") throw ScimErrors.invalidFilter("expected an attribute");
    this.i++;
    const path = resolvePath(this.catalog, t.v, parent);
    if (!path) throw ScimErrors.invalidFilter(`unknown attribute ${JSON.stringify(t.v.slice(0, 100))}`);
    if (this.tokens[this.i]?.t === "[") {
      if (parent) throw ScimErrors.invalidFilter("a value filter cannot nest");
      this.i++;
      const inner = this.or(depth + 1, path);
      this.expect("]");
      return { kind: "valuePath", path, filter: inner };
    }
    const op = this.peekWord();
    if (!op) throw ScimErrors.invalidFilter(`expected an operator after ${path}`);
    this.i++;
    if (op === "pr") return { kind: "present", path };
    if (!COMPARE_OPS.has(op)) throw ScimErrors.invalidFilter(`unknown operator ${JSON.stringify(op.slice(0, 20))}`);
    const value = this.tokens[this.i];
    if (value?.t !== "literal") throw ScimErrors.invalidFilter(`expected a value after ${op}`);
    this.i++;
    return { kind: "compare", path, op: op as CompareOp, value: value.v };
  }
}

export function parseFilter(text: string, catalog: AttributeCatalog): Filter {
  if (text.length > MAX_FILTER_LENGTH) throw ScimErrors.invalidFilter(`longer than ${MAX_FILTER_LENGTH} characters`);
  if (!text.trim()) throw ScimErrors.invalidFilter("empty");
  return new Parser(tokenize(text), catalog).parse();
}

/** The values at a path of a resource (arrays flattened: a multi-valued attribute matches if any element does). */
function valuesAt(resource: unknown, path: string): unknown[] {
  let current: unknown[] = [resource];
  for (const part of path.split(".")) {
    const next: unknown[] = [];
    for (const v of current) {
      const items = Array.isArray(v) ? v : [v];
      for (const item of items) {
        if (item === null || typeof item !== "object") continue;
        const found = (item as Record<string, unknown>)[part];
        if (found !== undefined && found !== null) next.push(found);
      }
    }
    current = next;
  }
  // A multi-valued complex attribute compared as a whole compares its `value` sub-attributes.
  return current.flatMap((v) => (Array.isArray(v) ? v : [v])).map((v) => (v && typeof v === "object" && "value" in v ? (v as { value: unknown }).value : v));
}

export function compare(actual: unknown, op: CompareOp, expected: Literal, caseExact: boolean): boolean {
  if (typeof actual === "boolean" || typeof expected === "boolean") {
    if (op === "eq") return actual === expected;
    if (op === "ne") return actual !== expected;
    throw ScimErrors.invalidFilter(`${op} does not apply to booleans`);
  }
  if (typeof actual !== "string" || typeof expected !== "string") {
    if (op === "eq") return actual === expected;
    if (op === "ne") return actual !== expected;
    return false;
  }
  const a = caseExact ? actual : actual.toLowerCase();
  const e = caseExact ? expected : expected.toLowerCase();
  switch (op) {
    case "eq": return a === e;
    case "ne": return a !== e;
    case "co": return a.includes(e);
    case "sw": return a.startsWith(e);
    case "ew": return a.endsWith(e);
    case "gt": return a > e;
    case "ge": return a >= e;
    case "lt": return a < e;
    case "le": return a <= e;
  }
}

export function matches(filter: Filter, resource: unknown, catalog: AttributeCatalog): boolean {
  switch (filter.kind) {
    case "and": return matches(filter.left, resource, catalog) && matches(filter.right, resource, catalog);
    case "or": return matches(filter.left, resource, catalog) || matches(filter.right, resource, catalog);
    case "not": return !matches(filter.filter, resource, catalog);
    case "present": return valuesAt(resource, filter.path).some((v) => v !== "" && !(Array.isArray(v) && v.length === 0));
    case "valuePath": {
      const [head] = filter.path.split(".");
      const elements = (resource as Record<string, unknown>)[head!];
      const list = Array.isArray(elements) ? elements : elements ? [elements] : [];
      // Inner paths are the element's own (canonical "emails.type" → "type").
      return list.some((el) => matches(relativize(filter.filter, `${filter.path}.`), el, catalog));
    }
    case "compare": {
      const exact = catalog.caseExact.includes(filter.path);
      const values = valuesAt(resource, filter.path);
      // ne holds when no value equals (an absent attribute is not equal).
      if (filter.op === "ne") return !values.some((v) => compare(v, "eq", filter.value, exact));
      return values.some((v) => compare(v, filter.op, filter.value, exact));
    }
  }
}

/** The filter with `prefix` taken off its paths (a value filter evaluated on one element). */
export function relativize(filter: Filter, prefix: string): Filter {
  switch (filter.kind) {
    case "and":
    case "or":
      return { ...filter, left: relativize(filter.left, prefix), right: relativize(filter.right, prefix) };
    case "not":
      return { kind: "not", filter: relativize(filter.filter, prefix) };
    case "valuePath":
      return filter;
    default:
      return { ...filter, path: filter.path.startsWith(prefix) ? filter.path.slice(prefix.length) : filter.path };
  }
}
