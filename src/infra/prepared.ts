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
