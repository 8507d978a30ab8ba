import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import type { FakeZtCentral } from "../helpers/fake-zt-central.js";
import { fuzz, fuzzEveryOperation, newStats, summary, type FuzzOptions } from "./harness.js";
import { SchemaFuzzer } from "./json-schema.js";
import { anonymousAuth, withHeaders } from "./request.js";
import { restOperationName, restOperations, restRequests } from "./rest.js";
import { ID_KINDS, World } from "./world.js";
import { COVERING_SIZE, fuzzOnly, fuzzRequests, fuzzTimeout, startFuzzApp } from "./config.js";

/**
 * Property-based fuzzing of every REST operation of the checked-in OpenAPI document (issue 18):
 * anonymous and signed in, each request generated from the operation's own schemas and then made
 * hostile. Every answer must be below 500 (but for upstream states), an error in the envelope with
 * a code, as documented; a batch of refused requests must not have written anything.
 */
let app: TestApp;
let central: FakeZtCentral;
let world: World;
const REQUESTS = fuzzRequests();

beforeAll(async () => {
  ({ app, central } = await startFuzzApp());
  world = new World(app);
  const started = Date.now();
  await world.build();
  console.log(`world built in ${Date.now() - started} ms`);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await central?.close();
});

describe("REST fuzz", () => {
  const fuzzer = new SchemaFuzzer(ID_KINDS);
  /** At the covering size every operation is reached: those the draw missed get batches of their own. */
  const run = (options: FuzzOptions, only: (keep: (op: string) => boolean) => FuzzOptions["arbitrary"]) =>
    REQUESTS >= COVERING_SIZE ? fuzzEveryOperation(options, fuzzOnly(restOperations().map(restOperationName)), only) : fuzz(options);

  it("covers every operation of the document", () => {
    expect(restOperations().length).toBeGreaterThan(200);
  });

  it(`anonymous: ${REQUESTS} requests`, async () => {
    const stats = newStats();
    const started = Date.now();
    const anonymous = (keep?: (op: string) => boolean) => fc.tuple(restRequests(fuzzer, keep), anonymousAuth).map(([r, h]) => withHeaders(r, h));
    await run({ app, door: "rest", caller: "anonymous", world, arbitrary: anonymous(), requests: REQUESTS, batch: 12, stats }, anonymous).finally(() => console.log(summary("REST anonymous", stats, Date.now() - started)));
    console.log(summary("REST anonymous", stats, Date.now() - started));
    expect(stats.requests).toBeGreaterThanOrEqual(REQUESTS);
    if (REQUESTS >= COVERING_SIZE) expect(stats.operations.size).toBe(restOperations().length);
    expect(stats.writeChecked).toBeGreaterThan(stats.batches / 3);
  }, fuzzTimeout(REQUESTS));

  it(`signed in: ${REQUESTS} requests`, async () => {
    const stats = newStats();
    const started = Date.now();
    await run({ app, door: "rest", caller: "signed-in", world, arbitrary: restRequests(fuzzer), requests: REQUESTS, batch: 12, stats }, (keep) => restRequests(fuzzer, keep)).finally(() => console.log(summary("REST signed in", stats, Date.now() - started), world.rebuilt));
    console.log(summary("REST signed in", stats, Date.now() - started));
    expect(stats.requests).toBeGreaterThanOrEqual(REQUESTS);
    if (REQUESTS >= COVERING_SIZE) expect(stats.operations.size).toBe(restOperations().length);
    expect(stats.writeChecked).toBeGreaterThan(stats.batches / 8);
  }, fuzzTimeout(REQUESTS));

  it("still answers /api/health", async () => {
    const health = await app.http.get("/api/health");
    expect(health.status).toBe(200);
  });
});
