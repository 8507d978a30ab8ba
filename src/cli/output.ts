import pc from "picocolors";
import type { Failure } from "./errors.js";

export type Colors = ReturnType<typeof pc.createColors>;

/** Colours only for a terminal, and never when NO_COLOR is set (https://no-color.org) or TERM=dumb. */
export function colorsFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Colors {
  const enabled = Boolean(stream.isTTY) && !("NO_COLOR" in env && env.NO_COLOR !== "") && env.TERM !== "dumb";
  return pc.createColors(enabled);
}

/**
 * Where a command writes. Results go to stdout (JSON with --json, text otherwise); progress,
 * prompts and errors go to stderr, so `keyward … --json | jq` always reads clean JSON.
 */
export interface Io {
  json: boolean;
  out: Colors;
  err: Colors;
  stdout(text: string): void;
  stderr(text: string): void;
  /** A terminal a person can answer on (the organization choice). */
  interactive: boolean;
}

export function processIo(json: boolean): Io {
  return {
    json,
    out: colorsFor(process.stdout),
    err: colorsFor(process.stderr),
    stdout: (t) => void process.stdout.write(t.endsWith("\n") ? t : `${t}\n`),
    stderr: (t) => void process.stderr.write(t.endsWith("\n") ? t : `${t}\n`),
    interactive: Boolean(process.stdin.isTTY && process.stderr.isTTY),
  };
}

/** What a command hands back: the machine form and the human lines. */
export interface Result {
  json: unknown;
  text: string[];
}

export function printResult(io: Io, result: Result): void {
  if (io.json) io.stdout(JSON.stringify(result.json, null, 2));
  else if (result.text.length) io.stdout(result.text.join("\n"));
}

/** One line on stderr (never a stack trace); with --json, the same failure as JSON on stdout too. */
export function printFailure(io: Io, f: Failure): void {
  io.stderr(`${io.err.red("error:")} ${f.message}`);
  if (io.json) io.stdout(JSON.stringify({ error: { type: f.type, message: f.message, exit_code: f.exitCode, details: f.details } }, null, 2));
}
