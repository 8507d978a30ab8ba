import { getTableColumns, type Table } from "drizzle-orm";

/**
 * A repository's select list: columns of one table picked by name, never the whole row (rule 7),
 * so a column added later (a hash, a secret) is read only where a repository names it. The result
 * is an ordinary drizzle selection (`db.select(cols)`, `.returning(cols)`); the row a select of it
 * returns is `Pick<typeof table.$inferSelect, keyof typeof cols>`.
 */
// NoInfer: K comes from `names` only, never from the select the result is passed to (which would widen it to every column).
export function pickColumns<T extends Table, K extends keyof T["_"]["columns"] & string>(table: T, names: readonly K[]): Pick<T["_"]["columns"], NoInfer<K>> {
  const all = getTableColumns(table);
  return Object.fromEntries(names.map((name) => [name, all[name]])) as Pick<T["_"]["columns"], K>;
}
