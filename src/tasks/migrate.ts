import { loadConfig, loadDotEnvFile } from "../config/index.js";
import { openDatabase } from "../infra/db.js";

/** `npm run db:migrate`: applies pending migrations to DATABASE_URL (or the embedded database). */
const config = (loadDotEnvFile(), loadConfig());
const database = await openDatabase({ url: config.db.url, dataDir: config.db.dataDir });
try {
  await database.migrate();
  console.log(`migrations applied (${database.kind})`);
} finally {
  await database.close();
}
