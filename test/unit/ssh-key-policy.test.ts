import { describe, expect, it } from "vitest";
import { SK_USER_PRESENCE as UP, SK_USER_VERIFICATION as UV } from "../../src/lib/ssh/index.js";
import { assertKeyAllowed, DEFAULT_CERT_POLICY, keyModifiers, mergePolicies, type StoredPolicy } from "../../src/modules/ssh-ca/policy.js";

/** The department key requirements as a matrix: policy × key type × flags of the key's proof. */
const policy = (name: string, p: Partial<StoredPolicy>): StoredPolicy => ({ ...DEFAULT_CERT_POLICY, departmentName: name, ...p });
const none = policy("Open", {});
const hw = policy("Hardware", { requireHardwareKey: true });
const touch = policy("Touch", { requireHardwareKey: true, requireTouch: true });
const verify = policy("Verify", { requireHardwareKey: true, requireVerify: true });
const both = policy("Both", { requireHardwareKey: true, requireTouch: true, requireVerify: true });

const keys = {
  "ed25519": { keyType: "ed25519", skProofFlags: null },
  "rsa": { keyType: "rsa", skProofFlags: null },
  "sk unproved": { keyType: "sk-ed25519", skProofFlags: null },
  "sk no touch": { keyType: "sk-ed25519", skProofFlags: 0 },
  "sk touch": { keyType: "sk-ecdsa", skProofFlags: UP },
  "sk PIN only": { keyType: "sk-ed25519", skProofFlags: UV },
  "sk touch+PIN": { keyType: "sk-ed25519", skProofFlags: UP | UV },
} as const;

// What each policy answers for each key: "ok" or the requirement refused.
const expected: Record<string, Record<keyof typeof keys, string>> = {
  Open: { "ed25519": "ok", "rsa": "ok", "sk unproved": "ok", "sk no touch": "ok", "sk touch": "ok", "sk PIN only": "ok", "sk touch+PIN": "ok" },
  Hardware: { "ed25519": "hardware_key", "rsa": "hardware_key", "sk unproved": "ok", "sk no touch": "ok", "sk touch": "ok", "sk PIN only": "ok", "sk touch+PIN": "ok" },
  Touch: { "ed25519": "hardware_key", "rsa": "hardware_key", "sk unproved": "touch", "sk no touch": "touch", "sk touch": "ok", "sk PIN only": "touch", "sk touch+PIN": "ok" },
  Verify: { "ed25519": "hardware_key", "rsa": "hardware_key", "sk unproved": "verify", "sk no touch": "verify", "sk touch": "verify", "sk PIN only": "ok", "sk touch+PIN": "ok" },
  Both: { "ed25519": "hardware_key", "rsa": "hardware_key", "sk unproved": "touch", "sk no touch": "touch", "sk touch": "verify", "sk PIN only": "touch", "sk touch+PIN": "ok" },
};

function outcome(policies: StoredPolicy[], key: (typeof keys)[keyof typeof keys]): string {
  try {
    assertKeyAllowed(policies, key);
    return "ok";
  } catch (e) {
    const err = e as { code: string; status: number; details: { requirement: string } };
    expect(err.code).toBe("HARDWARE_KEY_REQUIRED");
    expect(err.status).toBe(403);
    return err.details.requirement;
  }
}

describe("department key requirements", () => {
  it("allows or refuses each key type and proof as the matrix says", () => {
    for (const p of [none, hw, touch, verify, both]) {
      for (const [name, key] of Object.entries(keys) as Array<[keyof typeof keys, (typeof keys)[keyof typeof keys]]>) {
        expect(`${p.departmentName}/${name}: ${outcome([p], key)}`).toBe(`${p.departmentName}/${name}: ${expected[p.departmentName!]![name]}`);
      }
    }
  });

  it("is the strictest of the departments, names the one refusing, and says how to prove an unproved key", () => {
    expect(() => assertKeyAllowed([none, touch], keys["sk no touch"])).toThrow(expect.objectContaining({ details: { department: "Touch", requirement: "touch", key_type: "sk-ed25519" } }));
    expect(() => assertKeyAllowed([none, hw, verify], keys.ed25519)).toThrow(/The department "Hardware" requires a hardware-backed security key/);
    expect(() => assertKeyAllowed([touch], keys["sk unproved"])).toThrow(/prove you hold this key first/);
    const merged = mergePolicies([none, touch, verify], false);
    expect(merged).toMatchObject({ requireHardwareKey: true, requireTouch: true, requireVerify: true });
    expect(mergePolicies([none], true)).toMatchObject({ requireHardwareKey: false, requireTouch: false, requireVerify: false });
  });

  it("strips no-touch-required when touch is required and adds verify-required when verification is", () => {
    const custom = { customExtensions: ["no-touch-required"] };
    expect(keyModifiers(mergePolicies([policy("A", { ...custom, requireHardwareKey: true })], false))).toEqual({
      extensions: [...DEFAULT_CERT_POLICY.allowedExtensions, "no-touch-required"],
      criticalOptions: {},
    });
    expect(keyModifiers(mergePolicies([policy("A", { ...custom, requireHardwareKey: true, requireTouch: true, requireVerify: true })], false))).toEqual({
      extensions: [...DEFAULT_CERT_POLICY.allowedExtensions],
      criticalOptions: { "verify-required": "" },
    });
  });
});
