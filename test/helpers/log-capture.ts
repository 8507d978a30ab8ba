import { Writable } from "node:stream";
import { pino } from "pino";

/** A real pino logger whose lines tests can read. */
export function captureLogger(level = "info") {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}
