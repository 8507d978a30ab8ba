import { describe, expect, it } from "vitest";
import { describeScimRequest } from "../../src/modules/scim/index.js";

describe("describeScimRequest", () => {
  it("names the request by method and path, and a successful write by what it changed", () => {
    expect(describeScimRequest({ method: "get", path: "/Users", status: 200 })).toEqual({ request: "GET /Users" });
    expect(describeScimRequest({ method: "PATCH", path: "/Users/u1", status: 200 })).toEqual({ request: "PATCH /Users/u1", write: "PATCH User u1" });
    expect(describeScimRequest({ method: "DELETE", path: "/Groups/g1", status: 204 })).toEqual({ request: "DELETE /Groups/g1", write: "DELETE Group g1" });
    expect(describeScimRequest({ method: "POST", path: "/Users", status: 201, location: "https://k.example/scim/v2/Users/new-id" })).toEqual({ request: "POST /Users", write: "POST User new-id" });
  });

  it("makes no write of a failure or of a path outside Users and Groups", () => {
    expect(describeScimRequest({ method: "PATCH", path: "/Users/u1", status: 409 })).toEqual({ request: "PATCH /Users/u1" });
    expect(describeScimRequest({ method: "POST", path: "/Bulk", status: 404 })).toEqual({ request: "POST /Bulk" });
    expect(describeScimRequest({ method: "PUT", path: "/Schemas/x", status: 405 })).toEqual({ request: "PUT /Schemas/x" });
  });

  it("bounds and cleans what a caller controls", () => {
    const { request } = describeScimRequest({ method: "GET", path: `/Users/${"a".repeat(1000)}\n\u0000x`, status: 404 });
    expect(request.length).toBeLessThanOrEqual(204);
    expect(request).not.toMatch(/[\n\u0000]/);
    const { write } = describeScimRequest({ method: "PATCH", path: `/Users/${"b".repeat(1000)}`, status: 200 });
    expect(write!.length).toBeLessThanOrEqual(255);
  });
});
