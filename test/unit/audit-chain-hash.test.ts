import { describe, expect, it } from "vitest";
import { generateEd25519, verifyEd25519, signEd25519, ed25519PublicOf } from "../../src/lib/crypto/index.js";
import { anchorMessage, canonicalJson, GENESIS, linkHash, type ChainRecord } from "../../src/modules/audit/chain-hash.js";

const record: ChainRecord = {
  id: "00000000-0000-4000-8000-000000000001", createdAt: new Date("2026-01-02T03:04:05.678Z"), action: "user.login", actorId: null, userId: null,
  organizationId: null, resourceType: null, resourceId: null, success: true, ipAddress: "203.0.113.9", userAgent: "ua", requestId: "r1", metadata: { b: 1, a: { d: [1, "x"], c: null } }, errorMessage: null,
};

describe("the audit chain's hashing", () => {
  it("serializes canonically: key order does not matter (jsonb reorders keys), undefined members are dropped", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, "x"], c: null } })).toBe('{"a":{"c":null,"d":[1,"x"]},"b":1}');
    expect(canonicalJson({ a: 1, z: undefined })).toBe('{"a":1}');
    expect(linkHash("global", 1, GENESIS, record)).toBe(linkHash("global", 1, GENESIS, { ...record, metadata: { a: { c: null, d: [1, "x"] }, b: 1 } }));
  });

  it("binds each link to its chain, its place, its predecessor and every immutable field", () => {
    const h = linkHash("global", 1, GENESIS, record);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(linkHash("global", 2, GENESIS, record)).not.toBe(h);
    expect(linkHash(record.id, 1, GENESIS, record)).not.toBe(h);
    expect(linkHash("global", 1, "1".repeat(64), record)).not.toBe(h);
    for (const change of [{ action: "user.logout" }, { success: false }, { ipAddress: null }, { createdAt: new Date(record.createdAt.getTime() + 1) }, { metadata: { b: 2 } }, { errorMessage: "" }]) {
      expect(linkHash("global", 1, GENESIS, { ...record, ...change })).not.toBe(h);
    }
  });

  it("signs anchors with Ed25519: the signature covers kind, chain, seq, hash and time", () => {
    const key = generateEd25519();
    expect(ed25519PublicOf(key.privateKeyPem)).toBe(key.publicKeyPem);
    const anchor = { chain: "global", kind: "head" as const, seq: 7, hash: "a".repeat(64), signedAt: new Date() };
    const sig = signEd25519(key.privateKeyPem, anchorMessage(anchor));
    expect(verifyEd25519(key.publicKeyPem, anchorMessage(anchor), sig)).toBe(true);
    expect(verifyEd25519(key.publicKeyPem, anchorMessage({ ...anchor, seq: 8 }), sig)).toBe(false);
    expect(verifyEd25519(key.publicKeyPem, anchorMessage({ ...anchor, kind: "base" }), sig)).toBe(false);
    expect(verifyEd25519(generateEd25519().publicKeyPem, anchorMessage(anchor), sig)).toBe(false);
    expect(verifyEd25519(key.publicKeyPem, anchorMessage(anchor), "not base64!")).toBe(false);
  });
});
