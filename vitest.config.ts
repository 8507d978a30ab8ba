import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql@16 has no "exports": Node gives type-graphql/apollo the CJS build while Vite would give
    // our files index.mjs, i.e. two graphql realms. Pin everything to the one Node resolves.
    alias: [{ find: /^graphql$/, replacement: require.resolve("graphql") }],
  },
  test: {
    include: ["test/**/*.test.ts"],
    // Real processes on real services, some restarting them: vitest.resilience.config.ts.
    exclude: ["test/resilience/**", "**/node_modules/**"],
    globalSetup: ["test/helpers/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    fileParallelism: true,
    // Most test time is spent waiting (argon2 off the main thread, sockets, child processes, Chromium),
    // so three files at once pay even on two cores: the suite takes about a third of the wall time
    // of Vitest's default (cores - 1 = one worker on a two-core machine).
    maxWorkers: Math.max(3, availableParallelism() - 1),
    // A worker keeps its modules from one test file to the next instead of importing the whole app
    // graph again for each (about 6 s a file; 533 of the embedded pass's 1,052 s). Every file starts
    // apps of its own and no test mocks modules or changes process.env, so nothing a file does
    // reaches the next; a test that did would have to undo it.
    isolate: false,
  },
});
