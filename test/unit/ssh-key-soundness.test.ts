import { describe, expect, it } from "vitest";
import { parsePublicKey, SshKeyError } from "../../src/lib/ssh/index.js";
import { makeKey, malformedKeys } from "../factories/ssh.js";

describe("public keys that parse but cannot be sound", () => {
  for (const [name, line] of Object.entries(malformedKeys())) {
    it(`refuses ${name}`, () => {
      expect(() => parsePublicKey(line)).toThrow(SshKeyError);
    });
  }

  it("still accepts what ssh-keygen makes", () => {
    for (const type of ["ed25519", "ecdsa", "rsa"] as const) expect(parsePublicKey(makeKey(type).pub).type).toBe(type);
  });
});
