import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import type { FakeZtCentral } from "../helpers/fake-zt-central.js";
import { fuzz, newStats, summary } from "./harness.js";
import { SchemaFuzzer } from "./json-schema.js";
import { anonymousAuth, withHeaders } from "./request.js";
import { restOperations, restRequests } from "./rest.js";
import { ID_KINDS, World } from "./world.js";
import { fuzzRequests, fuzzTimeout, startFuzzApp } from "./config.js";

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

  it("covers every operation of the document", () => {
    expect(restOperations().length).toBeGreaterThan(200);
  });

  it(`anonymous: ${REQUESTS} requests`, async () => {
    const stats = newStats();
    const started = Date.now();
    const arbitrary = fc.tuple(restRequests(fuzzer), anonymousAuth).map(([r, h]) => withHeaders(r, h));
    await fuzz({ app, door: "rest", caller: "anonymous", world, arbitrary, requests: REQUESTS, batch: 12, stats }).finally(() => console.log(summary("REST anonymous", stats, Date.now() - started)));
    console.log(summary("REST anonymous", stats, Date.now() - started));
    expect(stats.requests).toBeGreaterThanOrEqual(REQUESTS);
    if (REQUESTS >= 3000) expect(stats.operations.size).toBe(restOperations().length);
    expect(stats.writeChecked).toBeGreaterThan(stats.batches / 3);
  }, fuzzTimeout(REQUESTS));

  it(`signed in: ${REQUESTS} requests`, async () => {
    const stats = newStats();
    const started = Date.now();
    await fuzz({ app, door: "rest", caller: "signed-in", world, arbitrary: restRequests(fuzzer), requests: REQUESTS, batch: 12, stats }).finally(() => console.log(summary("REST signed in", stats, Date.now() - started), world.rebuilt));
    console.log(summary("REST signed in", stats, Date.now() - started));
    expect(stats.requests).toBeGreaterThanOrEqual(REQUESTS);
    if (REQUESTS >= 3000) expect(stats.operations.size).toBe(restOperations().length);
    expect(stats.writeChecked).toBeGreaterThan(stats.batches / 8);
  }, fuzzTimeout(REQUESTS));

  it("still answers /api/health", async () => {
    const health = await app.http.get("/api/health");
    expect(health.status).toBe(200);
  });
});
