import { describe, expect, it } from "vitest";
import { generateEd25519, verifyEd25519, signEd25519, ed25519PublicOf } from "../../src/lib/crypto/index.js";
import { anchorMessage, canonicalJson, GENESIS, linkHash, recordBody, serializeLink, type ChainRecord } from "../../src/modules/audit/chain-hash.js";

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

  it("keeps the v1 format: links hashed by earlier versions still verify", () => {
    // Vectors from the first implementation; a change of format would break every stored chain.
    const odd: ChainRecord = {
      ...record, organizationId: "00000000-0000-4000-8000-0000000000aa", userAgent: 'é\u2028"\\\n',
      metadata: { "z\u0000": [{ y: 1.5, x: -0 }], emoji: "😀", n: 1e21 }, errorMessage: "boom",
    };
    expect(serializeLink("global", 1, record)).toBe(
      '["keyward-audit/v1","global",1,"00000000-0000-4000-8000-000000000001","2026-01-02T03:04:05.678Z","user.login",null,null,null,null,null,true,"203.0.113.9","ua","r1",{"a":{"c":null,"d":[1,"x"]},"b":1},null]',
    );
    expect(linkHash("global", 1, GENESIS, record)).toBe("5eec062780b7078352886bb5c6bd6af2396cd9d63c3083e744fa5196f6635573");
    expect(linkHash("global", 123456, "f".repeat(64), odd)).toBe("abc699a03500428e8c634643ae542b14aa4d338145d1ef7d81efbb3d4cb39748");
    expect(linkHash(odd.organizationId!, 7, "a".repeat(64), odd)).toBe("0683f35a56934e822569d2240b284ced7a4efde6cc8853a966893f3c496cc94d");
    // The record's part serialized once serves both of its chains.
    expect(linkHash(odd.organizationId!, 7, "a".repeat(64), odd, recordBody(odd))).toBe(linkHash(odd.organizationId!, 7, "a".repeat(64), odd));
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
