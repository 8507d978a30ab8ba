import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * The resilience suite (test/resilience): real Keyward processes on the real PostgreSQL and Redis,
 * some of which stop or restart those services. It needs DATABASE_URL and REDIS_URL, runs one
 * file at a time (a restarted PostgreSQL must not break another file), and runs once in CI, after
 * the PostgreSQL pass of `npm test` (`npm run test:resilience`).
 */
export default defineConfig({
  resolve: base.resolve,
  test: {
    include: ["test/resilience/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    fileParallelism: false,
    maxWorkers: 1,
  },
});
