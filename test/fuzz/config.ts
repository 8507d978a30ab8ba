import { startTestApp, type TestApp } from "../helpers/app.js";
import { startFakeZtCentral, type FakeZtCentral } from "../helpers/fake-zt-central.js";

/**
 * The fuzz run's size: FUZZ_REQUESTS requests per door (REST, GraphQL) and caller (anonymous,
 * signed in). The default, 5,000, makes 10,000 per caller (`npm test`); `.ci/run` runs 2,500;
 * `npm run fuzz` runs 50,000 (FUZZ_REQUESTS=<n> npm run fuzz for another size).
 */
export const fuzzRequests = () => Number(process.env.FUZZ_REQUESTS ?? 5000);

/** From this size on, every operation is fuzzed every run (fuzzEveryOperation) and the test says so. */
export const COVERING_SIZE = 2500;

/** The operations a run fuzzes: all of them, or FUZZ_ONLY's. */
export const fuzzOnly = (names: string[]) => names.filter((name) => new RegExp(process.env.FUZZ_ONLY ?? "").test(name));

/** Generous: a failure is reported by fast-check, not by the timeout (shrinking takes time too). */
export const fuzzTimeout = (requests: number) => 120_000 + requests * 60;

/** The ZeroTier Central stand-in's token and network, which the signed-in caller's organization uses. */
export const CENTRAL_TOKEN = "fuzz-central-token-0123456789";
export const CENTRAL_NETWORK = "8056c2e21c00f022";

/**
 * The app under fuzz. The coarse per-address edge limit is raised so that fuzzed requests reach
 * validation instead of a 429 after the first 1,200 (the test clock never moves, so no window ever
 * ends); the security limits (sign-in, reset, MFA, CA key generation) keep their defaults, which
 * also keeps argon2 and RSA key generation from eating the run. ZeroTier Central is the local
 * stand-in (NODE_ENV=test: production always calls the real one), answering without retries.
 */
export async function startFuzzApp(): Promise<{ app: TestApp; central: FakeZtCentral }> {
  const central = await startFakeZtCentral();
  central.rateLimit = 1_000_000;
  central.addToken(CENTRAL_TOKEN);
  central.addNetwork(CENTRAL_NETWORK, { name: "fuzz-net" });
  const app = await startTestApp({ RATE_LIMIT_API_IP: "1000000/60", ZEROTIER_CENTRAL_URL: central.url, NETWORK_CONTROLLER_RETRIES: "0" });
  return { app, central };
}
