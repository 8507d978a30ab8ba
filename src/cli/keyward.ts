import { toFailure } from "./errors.js";
import { main } from "./main.js";

/** The `keyward` executable (bundled to dist/cli/keyward.mjs by src/tasks/build-cli.ts). */
const exitWith = (code: number) => {
  // Flush what was written before leaving: piped stdout is asynchronous on some platforms.
  process.stdout.write("", () => process.exit(code));
};

// Whatever escapes (a library's stray rejection) still ends as one line, never a stack trace.
process.on("unhandledRejection", (e) => {
  process.stderr.write(`error: ${toFailure(e).message}\n`);
  exitWith(1);
});

void main(process.argv.slice(2)).then(exitWith);
