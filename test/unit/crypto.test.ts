import { describe, expect, it } from "vitest";
import { createPasswordHasher, createSecretBox, safeEqual, sha256Hex } from "../../src/lib/crypto/index.js";

const key = (n: number) => Buffer.alloc(32, n);

describe("secret box (AES-256-GCM, versioned keys)", () => {
  const box = createSecretBox([{ id: "k1", key: key(1) }]);

  it("round-trips and never repeats a ciphertext", () => {
    const a = box.encrypt("top secret", "ctx");
    const b = box.encrypt("top secret", "ctx");
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1\.k1\./);
    expect(box.decryptString(a, "ctx")).toBe("top secret");
  });

  it("refuses a ciphertext moved to another context or tampered with", () => {
    const sealed = box.encrypt("top secret", "row-1");
    expect(() => box.decrypt(sealed, "row-2")).toThrow();
    const parts = sealed.split(".");
    const body = Buffer.from(parts[3]!, "base64url");
    body[0]! ^= 1;
    parts[3] = body.toString("base64url");
    expect(() => box.decrypt(parts.join("."), "row-1")).toThrow();
  });

  it("rotates: the new key encrypts, old keys still decrypt, old values are flagged stale", () => {
    const old = box.encrypt("legacy");
    const rotated = createSecretBox([{ id: "k2", key: key(2) }, { id: "k1", key: key(1) }]);
    expect(rotated.decryptString(old)).toBe("legacy");
    expect(rotated.isStale(old)).toBe(true);
    expect(rotated.isStale(rotated.encrypt("fresh"))).toBe(false);
    const withoutOld = createSecretBox([{ id: "k2", key: key(2) }]);
    expect(() => withoutOld.decrypt(old)).toThrow();
  });
});

describe("hashing and comparison", () => {
  // What safeEqual is built on (crypto.timingSafeEqual) is safe-equal.test.ts's.
  it("hashes tokens with SHA-256 and compares strings", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(safeEqual("same", "same")).toBe(true);
    expect(safeEqual("same", "diff")).toBe(false);
    expect(safeEqual("short", "longer value")).toBe(false);
  });
});

describe("password hasher (argon2id)", () => {
  const hasher = createPasswordHasher({ memoryCost: 19456, timeCost: 2, parallelism: 1 });

  it("uses argon2id with the configured parameters and verifies", async () => {
    const hash = await hasher.hash("correct horse");
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await hasher.verify(hash, "correct horse")).toBe(true);
    expect(await hasher.verify(hash, "wrong horse")).toBe(false);
    expect(await hasher.verify("not a hash", "x")).toBe(false);
    expect(hasher.needsRehash(hash)).toBe(false);
  });

  it("asks for a rehash when the parameters were raised", async () => {
    const stronger = createPasswordHasher({ memoryCost: 32768, timeCost: 3, parallelism: 1 });
    const oldHash = await hasher.hash("pw value");
    expect(stronger.needsRehash(oldHash)).toBe(true);
    expect(await stronger.verify(oldHash, "pw value")).toBe(true);
  });
});

describe("TOTP (RFC 6238)", () => {
  it("matches the RFC 6238 SHA-1 test vectors (truncated to 6 digits)", async () => {
    const { base32Encode, totpCode } = await import("../../src/lib/crypto/index.js");
    const secret = base32Encode(Buffer.from("12345678901234567890"));
    // RFC 6238 Appendix B, SHA-1 column, last six digits.
    expect(totpCode(secret, Math.floor(59 / 30))).toBe("287082");
    expect(totpCode(secret, Math.floor(1111111109 / 30))).toBe("081804");
    expect(totpCode(secret, Math.floor(1234567890 / 30))).toBe("005924");
    expect(totpCode(secret, Math.floor(2000000000 / 30))).toBe("279037");
  });

  it("accepts one step of drift either way and nothing further", async () => {
    const { generateTotpSecret, matchTotp, totpCode, totpStep } = await import("../../src/lib/crypto/index.js");
    const secret = generateTotpSecret();
    const now = new Date();
    const step = totpStep(now);
    expect(matchTotp(secret, totpCode(secret, step - 1), now)).toBe(step - 1);
    expect(matchTotp(secret, totpCode(secret, step + 1), now)).toBe(step + 1);
    expect(matchTotp(secret, totpCode(secret, step + 2), now)).toBeNull();
    expect(matchTotp(secret, "12345", now)).toBeNull();
  });
});
