import { describe, expect, it } from "vitest";
import { createOriginMatcher, originOf } from "../../src/lib/origins.js";

describe("origin matching", () => {
  it("matches exact origins and wildcard subdomain patterns, nothing else", () => {
    const m = createOriginMatcher(["https://app.test", "https://*.example.com"]);
    expect(m.allows("https://app.test")).toBe(true);
    expect(m.allows("https://a.example.com")).toBe(true);
    expect(m.allows("https://a.b.example.com")).toBe(true);
    expect(m.allows("https://example.com")).toBe(false);
    expect(m.allows("http://a.example.com")).toBe(false);
    expect(m.allows("https://a.example.com.evil.test")).toBe(false);
    expect(m.allows("https://evilexample.com")).toBe(false);
    expect(m.allows("https://app.test:8443")).toBe(false);
  });

  it("treats * as any origin", () => {
    const m = createOriginMatcher(["*"]);
    expect(m.any).toBe(true);
    expect(m.allows("https://whatever.test")).toBe(true);
  });

  it("extracts origins only from absolute http(s) URLs", () => {
    expect(originOf("https://a.test/x?y=1")).toBe("https://a.test");
    expect(originOf("javascript:alert(1)")).toBeNull();
    expect(originOf("/relative")).toBeNull();
  });
});
