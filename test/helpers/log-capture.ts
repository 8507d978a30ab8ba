import { Writable } from "node:stream";
import { createLogger } from "../../src/infra/logger.js";

/** The service's own logger (its redaction included) writing lines that tests can read. */
export function captureLogger(level = "info") {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger(level, stream), lines };
}
