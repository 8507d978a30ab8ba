import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import type { FakeZtCentral } from "../helpers/fake-zt-central.js";
import { COVERING_SIZE, fuzzOnly, fuzzRequests, fuzzTimeout, startFuzzApp } from "./config.js";
import { GqlInputs, gqlOperationName, gqlOperations, gqlRequests } from "./graphql.js";
import { fuzz, fuzzEveryOperation, newStats, summary, type FuzzOptions } from "./harness.js";
import { SchemaFuzzer } from "./json-schema.js";
import { anonymousAuth, withHeaders } from "./request.js";
import { ID_KINDS, World } from "./world.js";

/**
 * Property-based fuzzing of every query and mutation of the checked-in schema (issue 18):
 * anonymous and signed in, arguments generated from their input types and then made hostile,
 * inline literals, broken documents and bodies. No answer may be a 5xx or carry an error without
 * extensions.code or an internal one; a batch of refused operations must not have written anything.
 */
let app: TestApp;
let central: FakeZtCentral;
let world: World;
const REQUESTS = fuzzRequests();

beforeAll(async () => {
  ({ app, central } = await startFuzzApp());
  world = new World(app);
  await world.build();
}, 120_000);
afterAll(async () => {
  await app?.close();
  await central?.close();
});

describe("GraphQL fuzz", () => {
  const inputs = new GqlInputs(new SchemaFuzzer(ID_KINDS));
  /** At the covering size every operation is reached: those the draw missed get batches of their own. */
  const run = (options: FuzzOptions, only: (keep: (op: string) => boolean) => FuzzOptions["arbitrary"]) =>
    REQUESTS >= COVERING_SIZE ? fuzzEveryOperation(options, fuzzOnly(gqlOperations().map(gqlOperationName)), only) : fuzz(options);

  it("covers every query and mutation of the schema", () => {
    expect(gqlOperations().length).toBeGreaterThan(180);
  });

  it(`anonymous: ${REQUESTS} requests`, async () => {
    const stats = newStats();
    const started = Date.now();
    const anonymous = (keep?: (op: string) => boolean) => fc.tuple(gqlRequests(inputs, keep), anonymousAuth).map(([r, h]) => withHeaders(r, h));
    await run({ app, door: "graphql", caller: "anonymous", world, arbitrary: anonymous(), requests: REQUESTS, batch: 12, stats }, anonymous).finally(() => console.log(summary("GraphQL anonymous", stats, Date.now() - started)));
    expect(stats.requests).toBeGreaterThanOrEqual(REQUESTS);
    if (REQUESTS >= COVERING_SIZE) expect(stats.operations.size).toBe(gqlOperations().length);
    expect(stats.writeChecked).toBeGreaterThan(stats.batches / 3);
  }, fuzzTimeout(REQUESTS));

  it(`signed in: ${REQUESTS} requests`, async () => {
    const stats = newStats();
    const started = Date.now();
    await run({ app, door: "graphql", caller: "signed-in", world, arbitrary: gqlRequests(inputs), requests: REQUESTS, batch: 12, stats }, (keep) => gqlRequests(inputs, keep)).finally(() =>
      console.log(summary("GraphQL signed in", stats, Date.now() - started), world.rebuilt),
    );
    expect(stats.requests).toBeGreaterThanOrEqual(REQUESTS);
    if (REQUESTS >= COVERING_SIZE) expect(stats.operations.size).toBe(gqlOperations().length);
    expect(stats.writeChecked).toBeGreaterThan(stats.batches / 8);
  }, fuzzTimeout(REQUESTS));

  it("still answers /api/health", async () => {
    expect((await app.http.get("/api/health")).status).toBe(200);
  });
});
