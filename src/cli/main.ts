import { dispatch } from "./dispatch.js";
import { toFailure, type ExitCodeValue } from "./errors.js";
import { printFailure, printResult, processIo } from "./output.js";
import { buildProgram } from "./program.js";

/** Parses, runs, prints; returns the exit code instead of exiting, so tests can call it. */
export async function main(argv: string[]): Promise<ExitCodeValue> {
  let io = processIo(argv.includes("--json"));
  const program = buildProgram(async (command, args, opts) => {
    io = processIo(Boolean(opts.json));
    printResult(io, await dispatch(command, args, opts, io));
  });
  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (e) {
    const failure = toFailure(e);
    // commander has already printed its own one-line usage error (or the help text).
    if (!(typeof (e as { code?: unknown })?.code === "string" && (e as { code: string }).code.startsWith("commander."))) printFailure(io, failure);
    return failure.exitCode;
  }
}
