import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { projectPath } from "../infra/paths.js";
import { COMPILED_EMAILS, compileAll } from "../modules/email/index.js";

/**
 * Compiles every email template from MJML into dist/emails.json, so that the running service
 * only fills them (src/modules/email/compile.ts says why). `npm install` and `npm run build` run
 * it; usage: `npm run build:emails`.
 */
const compiled = await compileAll(projectPath("emails"));
mkdirSync(dirname(COMPILED_EMAILS), { recursive: true });
// Written aside and renamed into place, as the CLI's build does: a renderer never reads half a file.
const tmp = `${COMPILED_EMAILS}.${process.pid}.tmp`;
writeFileSync(tmp, JSON.stringify(compiled));
renameSync(tmp, COMPILED_EMAILS);
console.log(`emails: ${Object.keys(compiled.templates).length} templates compiled into ${COMPILED_EMAILS}`);
