// The service: load the configuration, build the container, serve, run the jobs, stop cleanly.
// Started by src/main.ts, after the process-wide set-up that must come before any of these imports.
import "reflect-metadata";
import type { Server } from "node:http";
import { ConfigError, loadConfig, loadDotEnvFile } from "./config/index.js";
import { EXIT_DEPENDENCY_UNAVAILABLE, isClusterPrimary, reportListening, runPrimary } from "./cluster.js";
import { createContainer } from "./container.js";
import { isDependencyOutage } from "./infra/db-errors.js";
import { checkDependencies, DependencyUnavailableError } from "./infra/dependency-check.js";
import { StartupError } from "./infra/dir-lock.js";
import { drainable } from "./http/drain.js";
import { createHttpServer } from "./http/http-server.js";
import { createMetricsServer } from "./http/metrics.js";
import { startJobs } from "./jobs/index.js";
import { SealedValueError } from "./lib/crypto/envelope.js";
import { systemContext } from "./lib/request-context.js";
import { createApp } from "./server.js";

async function main(): Promise<void> {
  let config;
  try {
    loadDotEnvFile();
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(2);
    }
    throw e;
  }
  if (isClusterPrimary(config)) return runPrimary(config);
  const container = await createContainer(config);
  const { logger } = container;
  try {
    // PostgreSQL and Redis answer before anything is served, or the start stops saying which does not and why.
    await checkDependencies({ database: container.database, redis: container.redis, urls: { database: config.db.url, redis: config.redis.url } });
  } catch (e) {
    // A client still reconnecting would keep quit() waiting.
    container.redis?.disconnect();
    await container.close().catch(() => {});
    throw e;
  }
  for (const warning of config.warnings) logger.warn(warning);

  if (config.db.migrateOnStart) {
    await container.database.migrate();
    logger.info({ database: container.database.kind }, "migrations applied");
  }
  await container.services.operators.bootstrapSuperadmins(systemContext("bootstrap"), config.superadminEmails);

  const { app, oidc, stop: stopApp } = await createApp(container);
  const server: Server = createHttpServer(config.http.timeouts, app);
  const drain = drainable(server);
  try {
    await listen(server, config.http.port, config.http.host);
  } catch (e) {
    await stopApp().catch(() => {});
    await container.close();
    throw e;
  }
  // The separate metrics port (METRICS_PORT): /metrics only, for an address Prometheus alone reaches.
  const { metrics: metricsConfig } = config;
  const metricsServer = container.metrics && metricsConfig.port ? createMetricsServer(container.metrics, { token: metricsConfig.token, timeouts: config.http.timeouts }) : undefined;
  if (metricsServer && metricsConfig.port) {
    await listen(metricsServer, metricsConfig.port, metricsConfig.host);
    logger.info({ host: metricsConfig.host, port: metricsConfig.port }, "metrics listening");
  }
  const stopJobs = startJobs(container, oidc);
  const database = container.database.dataDir ? `embedded PGlite in ${container.database.dataDir}` : container.database.kind === "pglite" ? "embedded PGlite in memory" : "PostgreSQL";
  const sessions = container.redis ? "Redis" : "in-process (lost on restart)";
  logger.info({ url: config.http.publicUrl, host: config.http.host, port: config.http.port, database: container.database.kind, dataDir: container.database.dataDir, sessions }, "keyward listening");
  // One line for the person at the terminal (stderr, so stdout stays JSON for log shippers); with
  // WORKERS the primary prints it once all of them serve.
  if (!reportListening()) process.stderr.write(
    `Keyward is listening on ${config.http.host}:${config.http.port}, public URL ${config.http.publicUrl}; database: ${database}; sessions: ${sessions}. ` +
      `Next: create an account at ${config.http.appUrl}/register, then sign in at ${config.http.appUrl}/login.\n`,
  );

  const SHUTDOWN_GRACE_MS = 10_000;
  let closing = false;
  const shutdown = async (signal: string, exitCode = 0) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, "shutting down");
    stopJobs();
    // Requests in flight, those accepted but not read yet included, finish (up to
    // SHUTDOWN_GRACE_MS) before the database and Redis close under them: a response half-way
    // through its writes would otherwise fail and lose them (src/http/drain.ts).
    metricsServer?.close();
    await drain.close(SHUTDOWN_GRACE_MS);
    await stopApp().catch(() => {});
    await container.close();
    process.exit(exitCode);
  };
  // Errors outside any request (a job's stray promise, a library's emitter) reach the structured
  // log; an uncaught exception leaves the process in an unknown state, so it stops (and restarts).
  process.on("unhandledRejection", (err) => logger.error({ err }, "unhandled promise rejection"));
  process.on("uncaughtException", (err) => {
    logger.fatal({ err }, "uncaught exception: stopping");
    void shutdown("uncaughtException", 1);
  });
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

/** Binds the port, or fails with a message that says what to do (Express 5 would hand the error to a callback). */
function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      if (e.code === "EADDRINUSE") reject(new StartupError(`Port ${port} on ${host} is already in use (another Keyward, or another program). Stop it, or set PORT to a free port.`));
      else if (e.code === "EACCES") reject(new StartupError(`Not allowed to listen on port ${port} on ${host}: choose a PORT above 1023, or run with the right to bind it.`));
      else if (e.code === "EADDRNOTAVAIL") reject(new StartupError(`HOST ${host} is not an address of this machine.`));
      else reject(e);
    };
    const onListening = () => {
      server.off("error", onError);
      resolve();
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, host);
  });
}

main().catch((err) => {
  // PostgreSQL or Redis not reachable yet (a database still starting, a failover): not a fault of
  // this process, and nothing to fix here. It exits with EX_TEMPFAIL; what runs it (the cluster
  // primary, systemd, Docker, Kubernetes) starts it again after a pause, and it serves once the
  // dependency answers.
  if (err instanceof DependencyUnavailableError) {
    console.error(`keyward: ${err.message}; exiting to be started again.`);
    process.exit(EXIT_DEPENDENCY_UNAVAILABLE);
  }
  if (isDependencyOutage(err)) {
    const cause = ((err as { cause?: unknown }).cause ?? err) as { code?: unknown; message?: unknown };
    console.error(`keyward: PostgreSQL or Redis is not reachable (${String(cause.code ?? cause.message)}); exiting to be started again.`);
    process.exit(EXIT_DEPENDENCY_UNAVAILABLE);
  }
  // What an operator can fix is said in one message; anything else keeps its stack.
  if (err instanceof StartupError || err instanceof SealedValueError) console.error(`keyward: ${err.message}`);
  else console.error(err);
  process.exit(1);
});
