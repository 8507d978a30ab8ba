import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPglite } from "../../src/infra/db.js";
import { drainPool, leaseEmbedded } from "../helpers/embedded-pool.js";

/**
 * The test apps' embedded databases are lent from a pool per worker (test/helpers/embedded-pool.ts):
 * a returned one must be exactly what the dump was, or never lent again, and the app that returned
 * it must not reach it any more. On a dump of its own (a table with a serial, a standalone
 * sequence, a view, a trigger), so that it runs the same whatever the suite's mode.
 */
let dump: Blob;

beforeAll(async () => {
  const client = await startPglite("memory://");
  await client.exec(`
    create table things (id serial primary key, name text not null);
    create table parts (id serial primary key, thing_id int not null references things(id), touched boolean not null default false);
    create sequence serials start 100;
    create view named_things as select id, name from things;
    create function touch() returns trigger language plpgsql as $$ begin new.touched := true; return new; end $$;
    create trigger parts_touch before insert on parts for each row execute function touch();
  `);
  await client.exec("create schema drizzle; create table drizzle.__drizzle_migrations (id serial primary key, hash text not null); insert into drizzle.__drizzle_migrations (hash) values ('a');");
  dump = new Blob([await (await client.dumpDataDir("none")).arrayBuffer()]);
  await client.close();
}, 60_000);

const nextSerial = async (lease: { client: { query: <T>(q: string) => Promise<{ rows: T[] }> } }) => (await lease.client.query<{ n: number }>("select nextval('serials')::int as n")).rows[0]!.n;

describe("the embedded database pool", () => {
  const open: Array<{ release(): Promise<void> }> = [];
  afterAll(async () => {
    for (const lease of open) await lease.release();
    await drainPool(dump);
  });

  it("lends a returned database again, emptied, its sequences where the dump had them", async () => {
    const first = await leaseEmbedded(dump);
    expect(await nextSerial(first)).toBe(100);
    const thing = await first.client.query<{ id: number }>("insert into things (name) values ('a'), ('b') returning id");
    expect(thing.rows.map((r) => r.id)).toEqual([1, 2]);
    await first.client.query("insert into parts (thing_id) values (1)");
    await first.release();

    const second = await leaseEmbedded(dump);
    open.push(second);
    expect(second.reused).toBe(true);
    expect((await second.client.query("select * from things")).rows).toEqual([]);
    expect((await second.client.query("select * from parts")).rows).toEqual([]);
    expect(await nextSerial(second)).toBe(100);
    expect((await second.client.query<{ id: number }>("insert into things (name) values ('c') returning id")).rows[0]!.id).toBe(1);
    // The trigger and the view came through, and drizzle's migration log kept its row.
    await second.client.query("insert into parts (thing_id) values (1)");
    expect((await second.client.query<{ touched: boolean }>("select touched from parts")).rows).toEqual([{ touched: true }]);
    expect((await second.client.query<{ name: string }>("select name from named_things")).rows).toEqual([{ name: "c" }]);
    expect((await second.client.query("select hash from drizzle.__drizzle_migrations")).rows).toEqual([{ hash: "a" }]);
  });

  it("an app that returned its database reaches it no more: a late write fails instead of landing in the next one", async () => {
    const lease = await leaseEmbedded(dump);
    const late = lease.client;
    await lease.release();
    expect(() => late.query("insert into things (name) values ('late')")).toThrow(TypeError);
    const next = await leaseEmbedded(dump);
    open.push(next);
    expect((await next.client.query("select * from things")).rows).toEqual([]);
  });

  it("one whose schema a test changed is closed, never lent again", async () => {
    for (const change of ["drop view named_things", "drop trigger parts_touch on parts", "alter table things add column extra int", "create table extra (n int)", "alter table parts disable trigger parts_touch", "insert into drizzle.__drizzle_migrations (hash) values ('b')", "alter sequence serials increment by 5", "create policy only_a on things using (name = 'a')", "create unique index things_name on things (name)"]) {
      // Every database lent so far is still out (open): the changed one would be the only idle one.
      const lease = await leaseEmbedded(dump);
      await lease.client.exec(change);
      await lease.release();
      const next = await leaseEmbedded(dump);
      open.push(next);
      expect(next.reused, change).toBe(false);
      await next.client.query("insert into things (name) values ('x')");
      await next.client.query("insert into parts (thing_id) values (1)");
      expect((await next.client.query("select count(*)::int as n from named_things")).rows, change).toEqual([{ n: 1 }]);
      expect((await next.client.query("select touched from parts")).rows, change).toEqual([{ touched: true }]);
    }
  }, 120_000);

  it("session state an app leaves (a listened channel, an advisory lock, a setting, a notification callback) does not reach the next", async () => {
    while (open.length) await open.pop()!.release();
    const lease = await leaseEmbedded(dump);
    await lease.client.exec("listen somewhere; select pg_advisory_lock(42); set statement_timeout = 1234");
    const heardByTheFirst: string[] = [];
    await lease.client.listen("changes", (payload) => heardByTheFirst.push(payload));
    lease.client.onNotification((_channel, payload) => heardByTheFirst.push(payload));
    await lease.release();
    const next = await leaseEmbedded(dump);
    open.push(next);
    expect(next.reused).toBe(true);
    expect((await next.client.query("select count(*)::int as n from pg_locks where locktype = 'advisory'")).rows).toEqual([{ n: 0 }]);
    expect((await next.client.query<{ statement_timeout: string }>("show statement_timeout")).rows).toEqual([{ statement_timeout: "0" }]);
    expect((await next.client.query("select count(*)::int as n from pg_listening_channels()")).rows).toEqual([{ n: 0 }]);
    // The next app listens on the same channel: only its own callback hears it.
    const heardByTheNext: string[] = [];
    await next.client.listen("changes", (payload) => heardByTheNext.push(payload));
    await next.client.query("select pg_notify('changes', 'for the next app')");
    await expect.poll(() => heardByTheNext).toEqual(["for the next app"]);
    expect(heardByTheFirst).toEqual([]);
  });
});
