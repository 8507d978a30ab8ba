import "reflect-metadata";
import { loadConfig, loadDotEnvFile } from "../config/index.js";
import { createContainer } from "../container.js";
import { StartupError } from "../infra/dir-lock.js";
import { systemContext } from "../lib/request-context.js";
import type { ChainReport } from "../modules/audit/index.js";

/**
 * `npm run audit:verify [-- --json] [-- --chain-first]`: verifies the global audit chain and every
 * organization's, with the signatures on their heads and pruning checkpoints. Exit 0 when intact,
 * 1 when a link is broken (the first one named: chain, seq, record id, edited / deleted / inserted /
 * reordered / bad signature), 2 on usage errors. `--chain-first` chains pending records before
 * checking (run it where no instance is running, e.g. against a restored backup).
 */
const args = process.argv.slice(2);
if (args.some((a) => !["--json", "--chain-first"].includes(a))) {
  console.error("usage: npm run audit:verify [-- --json] [--chain-first]");
  process.exit(2);
}

const line = (r: ChainReport) => `${r.chain.padEnd(36)} seq ${r.fromSeq}..${r.headSeq} (${r.records} record(s) checked)${r.ok ? "  ok" : `  BROKEN: ${r.break!.kind}`}`;

let container;
try {
  container = await createContainer((loadDotEnvFile(), loadConfig()));
} catch (e) {
  if (!(e instanceof StartupError)) throw e;
  console.error(`${e.message.replace(/ Stop that process.*$/, "")} The embedded database opens in one process at a time: stop \`npm start\` and run this again.`);
  process.exit(1);
}
try {
  await container.database.migrate();
  if (args.includes("--chain-first")) await container.services.auditChain.chainAll();
  const report = await container.services.auditVerify.verifyAsOperator(systemContext("audit-verify"));
  if (args.includes("--json")) console.log(JSON.stringify(report, null, 2));
  else {
    console.log(line(report.global));
    console.log(`${report.organizationsChecked} organization chain(s) checked, ${report.brokenOrganizations.length} broken`);
    for (const r of report.brokenOrganizations) console.log(line(r));
    console.log(`${report.unchained} record(s) not chained yet (the chain job picks them up within AUDIT_CHAIN_INTERVAL_MS)`);
    const b = report.firstBreak;
    console.log(b ? `FIRST BROKEN LINK: chain ${b.chain}, seq ${b.seq}, record ${b.recordId ?? "(none)"}: ${b.kind}: ${b.detail}` : "Audit chains intact.");
  }
  process.exitCode = report.ok ? 0 : 1;
} catch (e) {
  console.error((e as Error).message);
  process.exitCode = 1;
} finally {
  await container.close();
}
