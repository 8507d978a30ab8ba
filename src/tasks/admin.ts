import "reflect-metadata";
import { loadConfig, loadDotEnvFile } from "../config/index.js";
import { createContainer } from "../container.js";
import { StartupError } from "../infra/dir-lock.js";
import { systemContext } from "../lib/request-context.js";

/**
 * Operator commands that run beside the service, on the same database:
 *   npm run admin -- promote <email>   grant superadmin
 *   npm run admin -- demote <email>    revoke superadmin
 */
const [command, email] = process.argv.slice(2);
if (!["promote", "demote"].includes(command ?? "") || !email) {
  console.error("usage: npm run admin -- promote|demote <email>");
  process.exit(2);
}
let container;
try {
  container = await createContainer((loadDotEnvFile(), loadConfig()));
} catch (e) {
  if (!(e instanceof StartupError)) throw e;
  // The embedded database belongs to one process: a running `npm start` holds it.
  console.error(`${e.message.replace(/ Stop that process.*$/, "")} The embedded database opens in one process at a time: stop \`npm start\`, run this command, then start Keyward again.`);
  process.exit(1);
}
try {
  await container.database.migrate();
  const user = await container.services.adminUsers.setSuperadmin(systemContext("admin-cli"), email, command === "promote");
  console.log(`${user.email} is ${user.isSuperadmin ? "now" : "no longer"} a superadmin`);
} catch (e) {
  console.error((e as Error).message);
  process.exitCode = 1;
} finally {
  await container.close();
}
