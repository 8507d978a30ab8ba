import type { PGlite } from "@electric-sql/pglite";
import { startPglite } from "../../src/infra/db.js";

/**
 * The test apps' in-memory databases on the embedded default, one pool per worker process.
 *
 * Restoring PGlite from the migrated dump is about 0.4 s of CPU a start (a 43 MB data directory
 * unpacked and a PostgreSQL backend started), a third of what starting a test app costs. A database an
 * app has finished with is made pristine again instead: its tables emptied and its sequences set back
 * to where the dump had them (about 0.07 s of CPU). One whose schema a test changed (a dropped view, a
 * trigger of its own) fails the fingerprint check and is closed, never lent again.
 *
 * An app gets a revocable view of the client: once its app is closed, anything it still tries
 * (a stray background write) fails as it would on a closed database, instead of landing in the
 * next app's data.
 */
export interface EmbeddedLease {
  client: PGlite;
  /** Whether it was another app's, emptied, rather than restored from the dump. */
  reused: boolean;
  /** Back to the pool once emptied (or closed, when it cannot be made pristine). */
  release(): Promise<void>;
}

interface Pristine {
  /** Every table to empty, quoted (the migrations' own bookkeeping excepted). */
  tables: string[];
  /** Each sequence as the dump had it. */
  sequences: Array<{ name: string; last: string; called: boolean }>;
  fingerprint: string;
}

/** Schemas the suite's data lives in: every one but PostgreSQL's own and drizzle's migration log. */
const USER_SCHEMA = `n.nspname not in ('pg_catalog', 'information_schema', 'drizzle') and n.nspname !~ '^pg_(toast|temp)'`;

/** What a test could change that emptying tables would not undo: relations, columns, views, triggers, functions, constraints, types. */
const FINGERPRINT = `
select md5(coalesce(string_agg(x, E'\\n' order by x), '')) as f from (
  select 'c ' || c.oid::regclass::text || ' ' || c.relkind::text || ' ' || c.relnatts || ' ' || case when c.relkind in ('v', 'm') then pg_get_viewdef(c.oid) else '' end as x
    from pg_class c join pg_namespace n on n.oid = c.relnamespace where ${USER_SCHEMA}
  union all select 'a ' || a.attrelid::regclass::text || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
    from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum where a.attnum > 0 and not a.attisdropped and ${USER_SCHEMA}
  union all select 't ' || t.tgrelid::regclass::text || ' ' || t.tgname || ' ' || t.tgenabled::text || ' ' || pg_get_triggerdef(t.oid) from pg_trigger t where not t.tgisinternal
  union all select 'i ' || i.indexrelid::regclass::text || ' ' || pg_get_indexdef(i.indexrelid) from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace where ${USER_SCHEMA}
  union all select 'q ' || q.seqrelid::regclass::text || ' ' || q.seqtypid::regtype::text || ' ' || q.seqstart || ' ' || q.seqincrement || ' ' || q.seqmax || ' ' || q.seqmin || ' ' || q.seqcache || ' ' || q.seqcycle from pg_sequence q
  union all select 'l ' || c.oid::regclass::text || ' ' || c.relrowsecurity || ' ' || c.relforcerowsecurity || ' ' || coalesce(array_to_string(c.reloptions, ','), '') from pg_class c join pg_namespace n on n.oid = c.relnamespace where ${USER_SCHEMA}
  union all select 'o ' || pol.polrelid::regclass::text || ' ' || pol.polname || ' ' || coalesce(pg_get_expr(pol.polqual, pol.polrelid), '') from pg_policy pol
  union all select 'w ' || w.ev_class::regclass::text || ' ' || w.rulename || ' ' || w.ev_enabled::text from pg_rewrite w where w.rulename <> '_RETURN'
  union all select 'v ' || evtname || ' ' || evtenabled::text from pg_event_trigger
  union all select 'p ' || p.oid::regprocedure::text || ' ' || md5(p.prosrc) || ' ' || p.provolatile::text || ' ' || p.prosecdef || ' ' || coalesce(array_to_string(p.proconfig, ','), '') from pg_proc p join pg_namespace n on n.oid = p.pronamespace where ${USER_SCHEMA}
  union all select 'k ' || r.conrelid::regclass::text || ' ' || r.conname || ' ' || pg_get_constraintdef(r.oid) from pg_constraint r join pg_namespace n on n.oid = r.connamespace where ${USER_SCHEMA}
  union all select 'e ' || e.enumtypid::regtype::text || ' ' || e.enumlabel from pg_enum e
  union all select 'y ' || ty.oid::regtype::text from pg_type ty join pg_namespace n on n.oid = ty.typnamespace where ${USER_SCHEMA}
  union all select 'n ' || nspname from pg_namespace
  union all select 'r ' || rolname from pg_roles
  union all select 'x ' || extname || ' ' || extversion from pg_extension
  union all select 'g ' || coalesce(array_to_string(setconfig, ','), '') from pg_db_role_setting
  union all select 'm ' || count(*) from drizzle.__drizzle_migrations
) s`;

/** Idle databases a worker keeps (each holds its WebAssembly memory): files start at most a few apps at once. */
const MAX_IDLE = 4;

/** Per dump: what pristine is (null when the dump has rows: nothing is pooled) and the idle clients. */
const pools = new Map<Blob, { pristine: Promise<Pristine | null> | undefined; idle: PGlite[] }>();

async function describePristine(client: PGlite): Promise<Pristine | null> {
  const tables = (await client.query<{ t: string }>(`select c.oid::regclass::text as t from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.relkind in ('r', 'p') and ${USER_SCHEMA} order by 1`)).rows.map((r) => r.t);
  // The dump must hold no rows of its own (today only drizzle's log): otherwise emptying is not pristine, and nothing is pooled.
  for (const t of tables) if ((await client.query(`select 1 from ${t} limit 1`)).rows.length) return null;
  const names = (await client.query<{ s: string }>(`select c.oid::regclass::text as s from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.relkind = 'S' and ${USER_SCHEMA} order by 1`)).rows.map((r) => r.s);
  const sequences = [];
  for (const name of names) {
    const [row] = (await client.query<{ last_value: string; is_called: boolean }>(`select last_value::text, is_called from ${name}`)).rows;
    sequences.push({ name, last: row!.last_value, called: row!.is_called });
  }
  return { tables, sequences, fingerprint: await fingerprint(client) };
}

const fingerprint = async (client: PGlite): Promise<string> => (await client.query<{ f: string }>(FINGERPRINT)).rows[0]!.f;

/** Empties a returned database; false when it cannot be made what the dump was. */
async function reset(client: PGlite, p: Pristine): Promise<boolean> {
  // Session state an app may leave: listened channels, advisory locks, settings, prepared plans, temporary tables.
  await client.exec("discard all");
  if ((await fingerprint(client)) !== p.fingerprint) return false;
  const restart = p.sequences.map((s) => `select setval('${s.name.replace(/'/g, "''")}', ${s.last}, ${s.called});`).join("\n");
  await client.exec(`truncate ${p.tables.join(", ")} cascade;\n${restart}`);
  return true;
}

/** A pristine in-memory database from the pool, or restored from `snapshot` when none is idle. */
export async function leaseEmbedded(snapshot: Blob): Promise<EmbeddedLease> {
  let pool = pools.get(snapshot);
  if (!pool) pools.set(snapshot, (pool = { pristine: undefined, idle: [] }));
  const { idle } = pool;
  const reused = idle.length > 0;
  const target = idle.pop() ?? (await startPglite("memory://", snapshot));
  // The first one restored, before any app touched it, says what pristine is.
  pool.pristine ??= describePristine(target);
  let pristine: Pristine | null;
  try {
    pristine = await pool.pristine;
  } catch (e) {
    pool.pristine = undefined;
    void target.close().catch(() => {});
    throw e;
  }
  // Notification callbacks live in the client's JavaScript, not in PostgreSQL (`discard all` does not
  // reach them): each one an app registers is removed when its database comes back.
  const unsubscribes: Array<() => Promise<void> | void> = [];
  const view = Proxy.revocable(target, {
    // PGlite's methods use private fields: call them on the client itself, not on the proxy.
    get: (t, key) => {
      if (key === "listen") {
        return async (...args: Parameters<PGlite["listen"]>) => {
          const unsubscribe = await t.listen(...args);
          unsubscribes.push(unsubscribe);
          return unsubscribe;
        };
      }
      if (key === "onNotification") {
        return (...args: Parameters<PGlite["onNotification"]>) => {
          const unsubscribe = t.onNotification(...args);
          unsubscribes.push(unsubscribe);
          return unsubscribe;
        };
      }
      const value = Reflect.get(t, key, t) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(t) : value;
    },
  });
  let released = false;
  return {
    client: view.proxy,
    reused,
    async release() {
      if (released) return;
      released = true;
      view.revoke();
      for (const unsubscribe of unsubscribes.splice(0)) await Promise.resolve(unsubscribe()).catch(() => {});
      // A transaction a failed test left open would hold the client's lock: give up on that one.
      const pooled = pristine ? await Promise.race([reset(target, pristine).catch(() => false), new Promise<false>((r) => setTimeout(() => r(false), 10_000).unref())]) : false;
      if (pooled && idle.length < MAX_IDLE) idle.push(target);
      else void target.close().catch(() => {});
    },
  };
}

/** Closes the idle databases of one dump (a test's own dump: the suite's stay for the next file). */
export async function drainPool(snapshot: Blob): Promise<void> {
  const pool = pools.get(snapshot);
  pools.delete(snapshot);
  for (const client of pool?.idle.splice(0) ?? []) await client.close().catch(() => {});
}
