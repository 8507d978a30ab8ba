/**
 * The fuzz run's size: FUZZ_REQUESTS requests per door (REST, GraphQL) and caller (anonymous,
 * signed in). The CI default keeps each file well under a minute and a half; `npm run fuzz` runs
 * a longer one (FUZZ_REQUESTS=100000 npm run fuzz for a night).
 */
export const fuzzRequests = () => Number(process.env.FUZZ_REQUESTS ?? 5000);

/** Generous: a failure is reported by fast-check, not by the timeout (shrinking takes time too). */
export const fuzzTimeout = (requests: number) => 120_000 + requests * 40;

/**
 * The app as production runs it, but with the coarse per-address edge limit raised so that fuzzed
 * requests reach validation instead of a 429 after the first 1,200 (the clock never moves in
 * tests, so no window ever ends). The security limits (sign-in, reset, MFA, CA key generation)
 * keep their defaults: they also keep argon2 and RSA key generation from eating the run.
 */
export const FUZZ_ENV: Record<string, string> = {
  NODE_ENV: "production",
  RATE_LIMIT_API_IP: "1000000/60",
};
