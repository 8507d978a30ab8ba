import type { TestProject } from "vitest/node";
import { connectPostgres, openDatabase } from "../../src/infra/db.js";

declare module "vitest" {
  export interface ProvidedContext {
    pgTemplate: string | null;
  }
}

/**
 * On PostgreSQL: one migrated template database per run; every test app clones it (CREATE DATABASE
 * … TEMPLATE), which takes milliseconds and isolates test files from each other.
 */
export default async function setup(project: TestProject) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    project.provide("pgTemplate", null);
    return;
  }
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
