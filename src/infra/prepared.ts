import { sql, type Placeholder } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import type { Db, Executor } from "./db.js";

type Placeholders = Record<string, unknown>;

interface Buildable<R> {
  prepare(name: string): { execute(values?: Placeholders): Promise<R> };
  execute(values?: Placeholders): Promise<R>;
}

/**
 * A hot-path query with `sql.placeholder()`s, built and prepared once per database handle.
 * Building a query (walking the columns and conditions into SQL) costs more CPU than PostgreSQL
 * spends answering a primary-key lookup, so each request paid it again for nothing. Inside a
 * transaction the query is built on the transaction's connection as before: a statement prepared
 * on the pool would run outside it.
 */
export function preparedQuery<P extends Placeholders, R>(name: string, build: (db: Executor) => Buildable<R>): (db: Executor, values: P) => Promise<R> {
  const perDb = new WeakMap<Db, { execute(values?: Placeholders): Promise<R> }>();
  return (db, values) => {
    if (db instanceof PgTransaction) return build(db).execute(values);
    let query = perDb.get(db);
    if (!query) {
      query = build(db).prepare(name);
      perDb.set(db, query);
    }
    return query.execute(values);
  };
}

/**
 * `sql.placeholder`s named `<prefix>.<field>` for the given fields: the values of an insert in a
 * prepared statement (several inserts in one statement each take their own prefix). Fill them
 * with `placeholderValues`.
 */
export function placeholdersFor<F extends string>(prefix: string, fields: readonly F[]): Record<F, Placeholder> {
  const names = namesOf(prefix, fields);
  return Object.fromEntries(fields.map((f, i) => [f, sql.placeholder(names[i]!)])) as Record<F, Placeholder>;
}

/**
 * The values of `placeholdersFor(prefix, fields)`, added to `into` (one object for a statement's
 * several inserts). A missing one is null (a prepared insert has no "default" for it), which only
 * nullable text, uuid and boolean columns accept as such: a timestamp, jsonb, array or bigint
 * column must be given its value.
 */
export function placeholderValues<F extends string>(prefix: string, fields: readonly F[], row: Partial<Record<F, unknown>>, into: Placeholders = {}): Placeholders {
  const names = namesOf(prefix, fields);
  for (let i = 0; i < fields.length; i++) into[names[i]!] = row[fields[i]!] ?? null;
  return into;
}

// The placeholder names of each (fields, prefix), made once: a signature fills some fifty.
const names = new WeakMap<readonly string[], Map<string, string[]>>();
function namesOf(prefix: string, fields: readonly string[]): string[] {
  let byPrefix = names.get(fields);
  if (!byPrefix) names.set(fields, (byPrefix = new Map()));
  let list = byPrefix.get(prefix);
  if (!list) byPrefix.set(prefix, (list = fields.map((f) => `${prefix}.${f}`)));
  return list;
}

/**
 * A placeholder as the value of a column in `update().set()`: drizzle binds it like any value (with
 * the column's encoding) but its types only admit values there.
 */
export const setPlaceholder = <T>(name: string): T => sql.placeholder(name) as unknown as T;
