import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { postgresPatched } from "../../src/infra/postgres-patch.js";

/**
 * The PostgreSQL driver when a backend goes away under it (issue 31; src/infra/postgres-patch.ts):
 * a transaction's next statements and rollback, a reserved connection used again, and a dead
 * transaction's code running on while the pool has already reconnected its connection for other
 * callers. Unpatched postgres-js 3.4.9 kills the process in the first two (a TypeError thrown from
 * setImmediate) and runs the third's inserts outside any transaction. Each case runs in a process
 * of its own (test/fixtures/driver-close.ts), whose exit code shows an uncatchable exception.
 */
describe("postgres-js patch", () => {
  it("is applied to the installed driver (npm install and npm run build apply it)", () => {
    expect(postgresPatched()).toBe(true);
  });
});

if (process.env.DATABASE_URL) describe("a PostgreSQL backend terminated under the driver", () => {
  it("settles every statement with CONNECTION_CLOSED, never throws where no caller can catch, and writes nothing outside the transaction", async () => {
    const run = await promisify(execFile)(process.execPath, ["--import", "tsx", "test/fixtures/driver-close.ts", process.env.DATABASE_URL!], { timeout: 60_000 });
    const seen = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
    expect(seen).toEqual({
      transaction: "CONNECTION_CLOSED",
      transactionPoolAfter: 1,
      reservedFirst: "CONNECTION_CLOSED",
      reservedSecond: "CONNECTION_CLOSED",
      reservedPoolAfter: 1,
      busyTransaction: "CONNECTION_CLOSED",
      busyQueued: [0, 1, 2, 3, 4],
      busyRowsWritten: [],
    });
  });
});
