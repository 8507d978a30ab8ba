import "reflect-metadata";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connectPostgres, type StatementObserver } from "../../src/infra/db.js";
import { inject } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { createContainer, type Container } from "../../src/container.js";
import type { Logger } from "../../src/infra/logger.js";
import { createPasswordHasher, type PasswordHasher } from "../../src/lib/crypto/index.js";
import { ManualClock } from "../../src/infra/clock.js";
import { createApp } from "../../src/server.js";
import { createHttpServer } from "../../src/http/http-server.js";
import type { OidcRuntime } from "../../src/oidc/index.js";
import { withDatabase } from "./global-setup.js";
import { startSmtpSink, type SmtpSink } from "./smtp-sink.js";
import { HttpClient } from "./http.js";
import { ContractChecker, watchFetches } from "./contract.js";
import { leaseEmbedded } from "./embedded-pool.js";
import { openApiDocument } from "../../rest-shim/index.js";

export interface TestApp {
  url: string;
  container: Container;
  services: Container["services"];
  /** The running OIDC provider (key rotation, provider internals). */
  oidc: OidcRuntime;
  clock: ManualClock;
  mail: SmtpSink;
  http: HttpClient;
  /** Runs the outbox worker once, as the background job would. */
  flushEmails(): Promise<number>;
  close(): Promise<void>;
}

const rand = () => Math.random().toString(36).slice(2, 10);

/**
 * argon2id at its cheapest (1 MiB, one pass: well under a millisecond a hash, against 20–60 ms at the
 * configured 19 MiB × 2), through the same hasher code: `startTestApp(env, { passwordHasher:
 * cheapPasswordHasher() })`. For files that sign many people up (every registration, activation,
 * password set and sign-in hashes or verifies) and prove nothing about hashing itself; a file about
 * the hash's cost, parameters, rehashing or the sign-in's equal work keeps the configured one.
 */
export const cheapPasswordHasher = (): PasswordHasher => createPasswordHasher({ memoryCost: 1024, timeCost: 1, parallelism: 1 });

/**
 * Starts Keyward in-process on a loopback port, in whichever mode the environment selects:
 * PostgreSQL + Redis when DATABASE_URL / REDIS_URL are set (a fresh database cloned from the
 * migrated template, a unique Redis key prefix), otherwise the embedded default (PGlite in memory,
 * in-process stores). Mail goes over SMTP to a real server on loopback.
 */
/** The migrated embedded database every in-memory test app starts from (test/helpers/global-setup.ts), read once per worker. */
let snapshot: { file: string; blob: Blob } | undefined;
function embeddedSnapshot(file: string | null): Blob | undefined {
  if (!file) return undefined;
  if (snapshot?.file !== file) snapshot = { file, blob: new Blob([readFileSync(file)]) };
  return snapshot.blob;
}

/**
 * The contract checker, one per worker: the OpenAPI document is the route table's (settings change
 * handlers, never routes or schemas), and building it with its validators took 0.15 s of every start.
 */
let checker: { version: string; contract: ContractChecker } | undefined;
function contractFor(container: Container): ContractChecker {
  if (checker?.version !== container.version) checker = { version: container.version, contract: new ContractChecker(openApiDocument(container.services, container.config, container.version)) };
  return checker.contract;
}

export async function startTestApp(env: Record<string, string> = {}, overrides: { logger?: Logger; onStatement?: StatementObserver; passwordHasher?: PasswordHasher } = {}): Promise<TestApp> {
  const mail = await startSmtpSink();
  const template = inject("pgTemplate");
  const baseUrl = process.env.DATABASE_URL;
  const dbName = baseUrl && template ? `keyward_t_${rand()}` : null;
  const prefix = `kwtest:${rand()}:`;
  const settings = (port: number): Record<string, string> => ({
    NODE_ENV: "test",
    // TEST_LOG_LEVEL=error shows the server's log of a failing run (what a 500 was).
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    PORT: String(port),
    PUBLIC_URL: `http://localhost:${port}`,
    SESSION_SECRET: "test-session-secret-that-is-long-enough-0123456789",
    ENCRYPTION_KEYS: `t1:${Buffer.alloc(32, 1).toString("base64")}`,
    DATA_DIR: "memory://",
    ...(dbName ? { DATABASE_URL: withDatabase(baseUrl!, dbName) } : {}),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: prefix } : {}),
    EMAIL_PROVIDER: "smtp",
    SMTP_HOST: "127.0.0.1",
    SMTP_PORT: String(mail.port),
    ...env,
  });

  // The listener is created as production creates it (src/serve.ts), with its read timeouts. It must
  // listen before the configuration is final (PUBLIC_URL names its port), so the timeouts are read
  // from the same variables once before.
  const server: Server = createHttpServer(loadConfig(settings(0)).http.timeouts);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  if (dbName) {
    const admin = connectPostgres(baseUrl!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${dbName}" template "${template}"`);
    await admin.end();
  }
  const config = loadConfig(settings(port));
  const clock = new ManualClock();
  const fromSnapshot = !config.db.url && config.db.dataDir === "memory://" ? embeddedSnapshot(inject("pgliteSnapshot")) : undefined;
  const lease = fromSnapshot ? await leaseEmbedded(fromSnapshot) : undefined;
  let opened: Container | undefined;
  let started: Awaited<ReturnType<typeof createApp>>;
  try {
    opened = await createContainer(config, { clock, ...overrides, embeddedClient: lease?.client });
    await opened.database.migrate();
    started = await createApp(opened);
  } catch (e) {
    await opened?.close().catch(() => {});
    await lease?.release();
    await mail.close();
    server.close();
    throw e;
  }
  const container = opened;
  const { app, oidc, stop } = started;
  server.on("request", app);
  const url = `http://localhost:${port}`;
  // Every REST answer the suite receives is checked against the OpenAPI document the app serves:
  // through HttpClient, and through any other fetch a test makes to this app.
  const contract = contractFor(container);
  const unwatch = watchFetches(url, contract);

  return {
    url,
    container,
    services: container.services,
    oidc,
    clock,
    mail,
    http: new HttpClient(url, contract),
    flushEmails: () => container.services.email.drain(),
    async close() {
      unwatch();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      try {
        await stop();
        if (container.redis) {
          const keys = await container.redis.keys(`${prefix}*`);
          if (keys.length) await container.redis.del(...keys);
        }
        await container.close();
      } finally {
        await lease?.release();
        await mail.close();
      }
      if (dbName) {
        const admin = connectPostgres(baseUrl!, { max: 1, onnotice: () => {} });
        await admin.unsafe(`drop database if exists "${dbName}" with (force)`);
        await admin.end();
      }
    },
  };
}
