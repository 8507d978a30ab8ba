import { and, sql, type SQL } from "drizzle-orm";
import { compare, relativize, type CompareOp, type Filter, type Literal } from "./scim-filter.js";
import { ScimErrors } from "./scim.errors.js";

/**
 * A SCIM filter as SQL (issue 36): the same answers as `matches` gives on the resource as it is
 * answered, computed by the database so that a list reads one page. What a resource type maps:
 * - `text`: a string column (or expression) that may be null; when not caseExact, `expr` is
 *   already lower-case (a lower-cased column, or `lower(…)`) and the value is lower-cased here;
 * - `bool`: a boolean expression that is never null;
 * - `constant`: the same value for every resource (undefined: absent);
 * - `many`: a multi-valued attribute (some element's `of` matches), through `exists`;
 * - `elements`: the target of a value filter (`emails[…]`, `members[…]`), its sub-attributes, under
 *   the key `<path>[]`.
 * A filter (or part of one) that maps to nothing here (`gt`/`lt`, meta dates, `name` as a whole)
 * is left to the caller, which evaluates it on the resources read.
 */
export type SqlAttribute =
  | { kind: "text"; expr: SQL; caseExact: boolean }
  | { kind: "bool"; expr: SQL }
  | { kind: "constant"; value: string | boolean | undefined; caseExact?: boolean }
  | { kind: "many"; exists: (cond: SQL) => SQL; of: Extract<SqlAttribute, { kind: "text" }> }
  | { kind: "elements"; exists: (cond: SQL) => SQL; attributes: SqlCatalog };

/** Canonical attribute paths (as the filter parser resolves them) to their SQL. */
export type SqlCatalog = Readonly<Record<string, SqlAttribute>>;

const TRUE = sql`true`;
const FALSE = sql`false`;

function textCompare(a: Extract<SqlAttribute, { kind: "text" }>, op: CompareOp, value: Literal): SQL | null {
  if (typeof value === "boolean") {
    // As `compare`: a boolean equals no string; ordering a string against one is a bad filter.
    if (op === "eq") return FALSE;
    if (op === "ne") return TRUE;
    throw ScimErrors.invalidFilter(`${op} does not apply to booleans`);
  }
  if (typeof value !== "string") return op === "ne" ? TRUE : FALSE;
  const v = a.caseExact ? value : value.toLowerCase();
  switch (op) {
    case "eq": return sql`coalesce(${a.expr} = ${v}::text, false)`;
    case "ne": return sql`not coalesce(${a.expr} = ${v}::text, false)`;
    case "co": return sql`coalesce(strpos(${a.expr}, ${v}::text) > 0, false)`;
    case "sw": return sql`coalesce(left(${a.expr}, char_length(${v}::text)) = ${v}::text, false)`;
    case "ew": return sql`coalesce(right(${a.expr}, char_length(${v}::text)) = ${v}::text, false)`;
    // Ordering follows JavaScript's string order in `matches`, not the database's collation.
    default: return null;
  }
}

function compareSql(a: SqlAttribute, op: CompareOp, value: Literal): SQL | null {
  switch (a.kind) {
    case "text": return textCompare(a, op, value);
    case "bool":
      if (op !== "eq" && op !== "ne") throw ScimErrors.invalidFilter(`${op} does not apply to booleans`);
      if (typeof value !== "boolean") return op === "ne" ? TRUE : FALSE;
      return op === "eq" ? sql`(${a.expr}) = ${value}` : sql`(${a.expr}) <> ${value}`;
    case "constant": {
      const values = a.value === undefined ? [] : [a.value];
      const hit = op === "ne" ? !values.some((v) => compare(v, "eq", value, a.caseExact ?? false)) : values.some((v) => compare(v, op, value, a.caseExact ?? false));
      return hit ? TRUE : FALSE;
    }
    case "many": {
      // ne holds when no element equals (as `matches`).
      const inner = textCompare(a.of, op === "ne" ? "eq" : op, value);
      if (!inner) return null;
      return op === "ne" ? sql`not ${a.exists(inner)}` : a.exists(inner);
    }
    case "elements": return null;
  }
}

function presentSql(a: SqlAttribute): SQL | null {
  switch (a.kind) {
    case "text": return sql`coalesce(${a.expr} <> '', false)`;
    case "bool": return TRUE;
    case "constant": return a.value !== undefined && a.value !== "" ? TRUE : FALSE;
    case "many": return a.exists(sql`coalesce(${a.of.expr} <> '', false)`);
    case "elements": return null;
  }
}

/** The filter as one SQL condition (never null-valued), or null when some part has no SQL form. */
export function filterSql(f: Filter, catalog: SqlCatalog): SQL | null {
  switch (f.kind) {
    case "and":
    case "or": {
      const left = filterSql(f.left, catalog);
      const right = left && filterSql(f.right, catalog);
      if (!left || !right) return null;
      return f.kind === "and" ? sql`(${left} and ${right})` : sql`(${left} or ${right})`;
    }
    case "not": {
      const inner = filterSql(f.filter, catalog);
      return inner ? sql`(not ${inner})` : null;
    }
    case "present": {
      const a = catalog[f.path];
      return a ? presentSql(a) : null;
    }
    case "compare": {
      const a = catalog[f.path];
      return a ? compareSql(a, f.op, f.value) : null;
    }
    case "valuePath": {
      const a = catalog[`${f.path}[]`];
      if (a?.kind !== "elements") return null;
      const inner = filterSql(relativize(f.filter, `${f.path}.`), a.attributes);
      return inner ? a.exists(inner) : null;
    }
  }
}

/**
 * A filter split for a list: `where` holds what SQL answers (the top-level `and` terms that map),
 * `rest` what the caller still evaluates on the rows read (null: nothing, SQL answered it all).
 */
export function splitFilter(f: Filter | null, catalog: SqlCatalog): { where: SQL | undefined; rest: Filter | null } {
  if (!f) return { where: undefined, rest: null };
  const terms: Filter[] = [];
  const flatten = (x: Filter): void => {
    if (x.kind !== "and") return void terms.push(x);
    flatten(x.left);
    flatten(x.right);
  };
  flatten(f);
  const pushed: SQL[] = [];
  const left: Filter[] = [];
  for (const t of terms) {
    const s = filterSql(t, catalog);
    if (s) pushed.push(s);
    else left.push(t);
  }
  const rest = left.length ? left.reduce((l, r) => ({ kind: "and", left: l, right: r })) : null;
  return { where: pushed.length ? and(...pushed) : undefined, rest };
}

/** A page of a list: offset and limit from SCIM's 1-based startIndex and count. */
export const pageOf = (startIndex: number, count: number) => ({ offset: startIndex - 1, limit: count });
