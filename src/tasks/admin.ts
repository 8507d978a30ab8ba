import "reflect-metadata";
import { loadConfig, loadDotEnvFile } from "../config/index.js";
import { createContainer } from "../container.js";
import { StartupError } from "../infra/dir-lock.js";
import { SealedValueError } from "../lib/crypto/index.js";
import { systemContext } from "../lib/request-context.js";
import type { SealedKindReport } from "../modules/keys/index.js";

/**
 * Operator commands that run beside the service, on the same database:
 *   npm run admin -- promote <email>   grant superadmin
 *   npm run admin -- demote <email>    revoke superadmin
 *   npm run admin -- reseal [--check]  re-encrypt every sealed value under the first key of
 *                                      ENCRYPTION_KEYS / CA_KEY_ENCRYPTION_KEY (--check: report only);
 *                                      exit 0 when nothing is left under an older key
 */
const USAGE = "usage: npm run admin -- promote|demote <email> | reseal [--check]";
const [command, arg] = process.argv.slice(2);
const valid = (["promote", "demote"].includes(command ?? "") && arg) || (command === "reseal" && (arg === undefined || arg === "--check"));
if (!valid) {
  console.error(USAGE);
  process.exit(2);
}

const describe = (report: SealedKindReport[]): string =>
  report
    .filter((r) => Object.keys(r.byKey).length > 0)
    .map((r) => `  ${r.kind.padEnd(26)} ${Object.entries(r.byKey).map(([id, n]) => `${id}: ${n}`).join(", ")}${r.stale ? `  (${r.stale} under an older key than ${r.currentKeyId})` : ""}`)
    .join("\n") || "  (no sealed values)";

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
  if (command === "reseal") {
    const { reseal } = container.services;
    if (arg === "--check") {
      const report = await reseal.report();
      console.log(`Sealed values by key id:\n${describe(report)}`);
      process.exitCode = report.some((r) => r.stale > 0) ? 3 : 0;
    } else {
      const { resealed, report } = await reseal.reseal(systemContext("admin-cli"), { onBatch: (kind, done) => console.error(`  ${kind}: ${done} re-sealed`) });
      const total = Object.values(resealed).reduce((a, b) => a + b, 0);
      const stale = report.reduce((n, r) => n + r.stale, 0);
      console.log(`Re-sealed ${total} value(s). Sealed values by key id now:\n${describe(report)}`);
      console.log(stale === 0 ? "Nothing is sealed under an older key: the older keys can be removed from the configuration." : `${stale} value(s) still use an older key (changed while this ran?): run it again.`);
      process.exitCode = stale === 0 ? 0 : 3;
    }
  } else {
    const user = await container.services.operators.setSuperadmin(systemContext("admin-cli"), arg!, command === "promote");
    console.log(`${user.email} is ${user.isSuperadmin ? "now" : "no longer"} a superadmin`);
  }
} catch (e) {
  console.error(e instanceof SealedValueError ? `keyward: ${e.message}` : (e as Error).message);
  process.exitCode = 1;
} finally {
  await container.close();
}
