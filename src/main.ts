import "reflect-metadata";
import type { Server } from "node:http";
import { ConfigError, loadConfig, loadDotEnvFile } from "./config/index.js";
import { createContainer } from "./container.js";
import { startJobs } from "./jobs/index.js";
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
  const container = await createContainer(config);
  const { logger } = container;
  for (const warning of config.warnings) logger.warn(warning);

  if (config.db.migrateOnStart) {
    await container.database.migrate();
    logger.info({ database: container.database.kind }, "migrations applied");
  }
  await container.services.adminUsers.bootstrapSuperadmins(systemContext("bootstrap"), config.superadminEmails);

  const { app, oidc, stop: stopApp } = await createApp(container);
  const stopJobs = startJobs(container, oidc);
  const server: Server = app.listen(config.http.port, config.http.host, () => {
    logger.info(
      { url: config.http.publicUrl, database: container.database.kind, sessions: container.redis ? "redis" : "in-process" },
      "keyward listening",
    );
  });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, "shutting down");
    stopJobs();
    server.close();
    server.closeIdleConnections();
    await stopApp().catch(() => {});
    await container.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
