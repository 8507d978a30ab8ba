import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { connectPostgres, openDatabase, postgresConnection, resultRows, type Database } from "../../src/infra/db.js";
import { withDatabase } from "../helpers/global-setup.js";

describe("DATABASE_URL", () => {
  it("takes libpq's Unix socket form (?host=/dir) as the socket's path, and leaves every other URL alone", () => {
    expect(postgresConnection("postgres://keyward@localhost/keyward?host=/run/postgresql")).toEqual({
      url: "postgres://keyward@localhost/keyward",
      path: "/run/postgresql/.s.PGSQL.5432",
    });
    // The port names the socket file; a trailing slash and other parameters are kept apart.
    expect(postgresConnection("postgresql:///keyward?host=/tmp/&sslmode=disable&port=1")).toEqual({
      url: "postgresql:///keyward?sslmode=disable&port=1",
      path: "/tmp/.s.PGSQL.5432",
    });
    expect(postgresConnection("postgres://k:pw@localhost:6432/keyward?host=/var/run/postgresql")).toEqual({
      url: "postgres://k:pw@localhost:6432/keyward",
      path: "/var/run/postgresql/.s.PGSQL.6432",
    });
    for (const url of ["postgres://keyward:pw@db:5432/keyward", "postgres://db/keyward?host=db2", "postgres://db/keyward?sslmode=require", "not a url"]) {
      expect(postgresConnection(url)).toEqual({ url });
    }
  });
});

// The same server over its Unix socket: only where PostgreSQL runs on this machine (as in CI).
const local = process.env.DATABASE_URL && ["127.0.0.1", "localhost", "[::1]"].includes(new URL(process.env.DATABASE_URL).hostname);
if (local) describe("DATABASE_URL over a Unix socket (PostgreSQL on this machine)", () => {
  const name = `keyward_socket_${process.pid}_${randomBytes(3).toString("hex")}`;
  let database: Database;
  let socketUrl: string;
  beforeAll(async () => {
    const admin = connectPostgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    const [{ dirs }] = (await admin`select current_setting('unix_socket_directories') as dirs`) as unknown as [{ dirs: string }];
    await admin.unsafe(`create database "${name}"`);
    await admin.end();
    const url = new URL(withDatabase(process.env.DATABASE_URL!, name));
    url.searchParams.set("host", dirs.split(",")[0]!.trim());
    socketUrl = url.toString();
    database = await openDatabase({ url: socketUrl, dataDir: "", poolSize: 2 });
  });
  afterAll(async () => {
    await database?.close();
    const admin = connectPostgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  });

  it("queries, migrates and hears notifications through the socket", async () => {
    await database.ping();
    // The migrations run over the socket (a connection of their own), then a query on the pool:
    // inet_client_addr() is null for a Unix-domain connection.
    await database.migrate();
    const [row] = resultRows<{ addr: string | null; db: string; users: number }>(
      await database.db.execute(sql`select inet_client_addr() as addr, current_database() as db, (select count(*)::int from users) as users`),
    );
    expect(row).toEqual({ addr: null, db: name, users: 0 });

    const channel = `kw_socket_${randomBytes(4).toString("hex")}`;
    const heard: string[] = [];
    await database.listen(channel, { notify: (p) => heard.push(p), ready: () => {}, lost: () => {} });
    const client = connectPostgres(socketUrl, { max: 1, onnotice: () => {} });
    await client`select pg_notify(${channel}, 'over the socket')`;
    await client.end();
    for (let i = 0; i < 50 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(heard).toEqual(["over the socket"]);
  });
});
