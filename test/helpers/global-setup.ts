import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import type { TestProject } from "vitest/node";
import { connectPostgres, MIGRATIONS_DIR, openDatabase } from "../../src/infra/db.js";

declare module "vitest" {
  export interface ProvidedContext {
    pgTemplate: string | null;
    pgliteSnapshot: string | null;
  }
}

/**
 * On PostgreSQL: one migrated template database per run; every test app clones it (CREATE DATABASE
 * … TEMPLATE), which takes milliseconds and isolates test files from each other. On the embedded
 * default: one migrated PGlite, dumped to a file; every test app's in-memory database starts from
 * that dump (test/helpers/app.ts) instead of creating and migrating a cluster (about 3 s a start on
 * a busy two-core machine, against under one).
 */
export default async function setup(project: TestProject) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    project.provide("pgTemplate", null);
    const dir = mkdtempSync(join(tmpdir(), "keyward-pglite-"));
    const client = new PGlite();
    await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_DIR });
    const dump = await client.dumpDataDir("none");
    await client.close();
    const file = join(dir, "migrated.tar");
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    project.provide("pgliteSnapshot", file);
    return () => rmSync(dir, { recursive: true, force: true });
  }
  project.provide("pgliteSnapshot", null);
  const template = `keyward_tpl_${process.pid}`;
  const admin = connectPostgres(url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${template}"`);
  await admin.unsafe(`create database "${template}"`);
  const db = await openDatabase({ url: withDatabase(url, template), dataDir: "", poolSize: 1 });
  await db.migrate();
  await db.close();
  project.provide("pgTemplate", template);
  return async () => {
    await admin.unsafe(`drop database if exists "${template}" with (force)`);
    await admin.end();
  };
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}
