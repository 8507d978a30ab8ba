import * as nodeCrypto from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { safeEqual } from "../../src/lib/crypto/index.js";

// Node's own timingSafeEqual, watched (not replaced): safeEqual must hand its comparison to it.
vi.mock("node:crypto", async (original) => {
  const real = await original<typeof import("node:crypto")>();
  return { ...real, timingSafeEqual: vi.fn(real.timingSafeEqual) };
});
const timingSafeEqual = vi.mocked(nodeCrypto.timingSafeEqual);
afterEach(() => timingSafeEqual.mockClear());

/**
 * A timing test cannot tell `===` from a constant-time comparison on a busy machine (the mutation
 * review replaced it and the old test stayed green). This one asserts what safeEqual is built on:
 * every answer comes from crypto.timingSafeEqual over the bytes compared, also when the lengths
 * differ (a dummy comparison, so a length mismatch does not return early).
 */
describe("safeEqual", () => {
  it("answers equal and unequal strings from crypto.timingSafeEqual over their bytes", () => {
    expect(safeEqual("same secret", "same secret")).toBe(true);
    expect(timingSafeEqual).toHaveBeenCalledTimes(1);
    expect(timingSafeEqual).toHaveBeenLastCalledWith(Buffer.from("same secret"), Buffer.from("same secret"));

    expect(safeEqual("same secret", "same secreT")).toBe(false);
    expect(timingSafeEqual).toHaveBeenCalledTimes(2);
    expect(timingSafeEqual).toHaveBeenLastCalledWith(Buffer.from("same secret"), Buffer.from("same secreT"));
  });

  it("still compares (a dummy) when the lengths differ, and says unequal", () => {
    expect(safeEqual("short", "longer value")).toBe(false);
    expect(timingSafeEqual).toHaveBeenCalledTimes(1);
    expect(safeEqual("", "x")).toBe(false);
    expect(timingSafeEqual).toHaveBeenCalledTimes(2);
  });
});
