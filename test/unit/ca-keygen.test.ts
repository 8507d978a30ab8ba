import { pbkdf2 } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateCaKey, parsePublicKey } from "../../src/lib/ssh/index.js";

describe("CA key generation", () => {
  it("generates RSA-4096 off libuv's pool: work queued behind four RSA keys is not held up", async () => {
    const order: string[] = [];
    // Four RSA jobs would fill the default pool of four threads if they ran there.
    const rsa = Array.from({ length: 4 }, (_, i) => generateCaKey("rsa", `ca-${i}`).then((k) => (order.push("rsa"), k)));
    await new Promise<void>((resolve, reject) => pbkdf2("pw", "salt", 1, 32, "sha256", (e) => (e ? reject(e) : (order.push("pool"), resolve()))));
    const keys = await Promise.all(rsa);
    expect(order[0]).toBe("pool");
    for (const k of keys) {
      expect(k.publicLine.startsWith("ssh-rsa ")).toBe(true);
      expect(k.privatePem).toContain("BEGIN PRIVATE KEY");
      expect(parsePublicKey(k.publicLine).bits).toBe(4096);
    }
  });

  it("generates ed25519 and ecdsa keys", async () => {
    expect((await generateCaKey("ed25519", "c")).publicLine).toMatch(/^ssh-ed25519 /);
    expect((await generateCaKey("ecdsa", "c")).publicLine).toMatch(/^ecdsa-sha2-nistp256 /);
  });
});
