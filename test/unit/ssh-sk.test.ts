import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  generateCaKey,
  loadPrivateKey,
  parseCertificate,
  parsePublicKey,
  signCertificate,
  SK_USER_PRESENCE,
  SK_USER_VERIFICATION,
  verifySshSignature,
  verifySshSignatureDetails,
} from "../../src/lib/ssh/index.js";
import { SshWriter } from "../../src/lib/ssh/wire.js";
import { FIXED_SK_FINGERPRINTS, FIXED_SK_KEYS, FIXED_SK_SEEDS } from "../fixtures/sk-keys.js";
import { softSkKey, skSshsig } from "../helpers/soft-sk.js";

/**
 * FIDO2 security keys (sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com), parsed and
 * verified in-process and checked against the real ssh-keygen: the fixed test keys' fingerprints,
 * `ssh-keygen -Y check-novalidate` on the software authenticator's signatures (so the verifier is
 * tested on the bytes ssh-keygen itself accepts) and `ssh-keygen -L` on sk certificates.
 */
const dir = mkdtempSync(join(tmpdir(), "kw-sk-"));
const KINDS = ["ed25519", "ecdsa"] as const;
const msg = Buffer.from("Please sign this to verify SSH key ownership: 00ff\n");

describe("security-key public keys", () => {
  it("parses the fixed test keys with ssh-keygen's fingerprint, type and application", () => {
    for (const kind of KINDS) {
      const parsed = parsePublicKey(FIXED_SK_KEYS[kind]);
      expect(parsed).toMatchObject({ type: `sk-${kind}`, bits: 256, application: "ssh:", comment: `fixed-${kind}-sk@test`, fingerprint: FIXED_SK_FINGERPRINTS[kind] });
      expect(parsed.algorithm).toBe(FIXED_SK_KEYS[kind].split(" ")[0]);
      const path = join(dir, `fixed-${kind}.pub`);
      writeFileSync(path, `${FIXED_SK_KEYS[kind]}\n`);
      expect(execFileSync("ssh-keygen", ["-l", "-E", "sha256", "-f", path], { encoding: "utf8" }).split(" ")[1]).toBe(FIXED_SK_FINGERPRINTS[kind]);
      // The software authenticator still holds the fixed keys' private halves.
      expect(softSkKey(kind, FIXED_SK_SEEDS[kind], "ssh:", `fixed-${kind}-sk@test`).line).toBe(FIXED_SK_KEYS[kind]);
    }
  });

  it("keeps another application, and refuses malformed sk keys with SSH_KEY_ERROR", () => {
    expect(parsePublicKey(softSkKey("ed25519", "app", "ssh:deploy").line).application).toBe("ssh:deploy");
    const ed = Buffer.from(FIXED_SK_KEYS.ed25519.split(" ")[1]!, "base64");
    const pub32 = ed.subarray(34, 66);
    const line = (blob: Buffer, alg = "sk-ssh-ed25519@openssh.com") => `${alg} ${blob.toString("base64")}`;
    const w = () => new SshWriter().string("sk-ssh-ed25519@openssh.com");
    const bad = [
      line(w().string(pub32).toBuffer()), // no application
      line(w().string(pub32).string("https://example.com").toBuffer()), // not an ssh: application
      line(w().string(pub32).string("ssh:\u0000").toBuffer()), // unprintable
      line(w().string(pub32.subarray(0, 31)).string("ssh:").toBuffer()), // short key
      line(Buffer.concat([ed, Buffer.from([0])])), // trailing data
      line(ed, "sk-ecdsa-sha2-nistp256@openssh.com"), // the line says another type
      line(new SshWriter().string("sk-ecdsa-sha2-nistp256@openssh.com").string("nistp384").string(Buffer.alloc(97, 4)).string("ssh:").toBuffer(), "sk-ecdsa-sha2-nistp256@openssh.com"),
      line(new SshWriter().string("sk-ecdsa-sha2-nistp256@openssh.com").string("nistp256").string(Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)])).string("ssh:").toBuffer(), "sk-ecdsa-sha2-nistp256@openssh.com"), // off the curve
      "sk-ssh-ed25519@openssh.com !!!",
      "sk-ssh-ed25519@openssh.com",
    ];
    for (const input of bad) expect(() => parsePublicKey(input), input).toThrow(expect.objectContaining({ code: "SSH_KEY_ERROR" }));
  });
});

describe("proof of possession with a security key (SSHSIG with sk signature blobs)", () => {
  it("verifies what ssh-keygen verifies, and reports the flags and counter the authenticator signed", () => {
    for (const kind of KINDS) {
      const key = softSkKey(kind, FIXED_SK_SEEDS[kind]);
      for (const flags of [SK_USER_PRESENCE, SK_USER_PRESENCE | SK_USER_VERIFICATION, 0]) {
        const sig = skSshsig(key, msg, { flags, counter: 7 });
        expect(verifySshSignatureDetails(sig, msg, key.blob, "file")).toEqual({ sk: { flags, counter: 7 } });
        const sigPath = join(dir, `${kind}-${flags}.sig`);
        writeFileSync(sigPath, sig);
        const checked = spawnSync("ssh-keygen", ["-Y", "check-novalidate", "-n", "file", "-s", sigPath], { input: msg, encoding: "utf8" });
        expect(checked.status, checked.stderr).toBe(0);
      }
    }
  });

  it("refuses a wrong application, tampered flags or counter, another message, namespace or key", () => {
    for (const kind of KINDS) {
      const key = softSkKey(kind, FIXED_SK_SEEDS[kind]);
      const other = softSkKey(kind, "another key");
      expect(verifySshSignature(skSshsig(key, msg, { application: "ssh:other" }), msg, key.blob, "file")).toBe(false);
      expect(verifySshSignature(skSshsig(key, msg), Buffer.from("other\n"), key.blob, "file")).toBe(false);
      expect(verifySshSignature(skSshsig(key, msg, { namespace: "git" }), msg, key.blob, "file")).toBe(false);
      expect(verifySshSignature(skSshsig(other, msg), msg, key.blob, "file")).toBe(false);
      // The flags and counter sit after the signature, outside it on the wire, but inside what
      // the authenticator signed: changing them breaks it. They are the blob's last 5 bytes.
      const armored = skSshsig(key, msg, { flags: SK_USER_PRESENCE, counter: 3 });
      const blob = Buffer.from(armored.replace(/-----[A-Z ]+-----|\s/g, ""), "base64");
      for (const [offset, value] of [[5, SK_USER_PRESENCE | SK_USER_VERIFICATION], [1, 4]] as const) {
        const tampered = Buffer.from(blob);
        tampered[tampered.length - offset] = value;
        expect(verifySshSignature(tampered.toString("base64"), msg, key.blob, "file")).toBe(false);
      }
      // Trailing bytes after the signature are refused; the untouched blob still verifies.
      expect(verifySshSignature(Buffer.concat([blob, Buffer.from([0])]).toString("base64"), msg, key.blob, "file")).toBe(false);
      expect(verifySshSignature(blob.toString("base64"), msg, key.blob, "file")).toBe(true);
    }
  });
});

describe("certificates for security keys", () => {
  it("certifies sk keys as sk-…-cert-v01 that ssh-keygen -L reads, with verify-required and without no-touch-required", async () => {
    const ca = await generateCaKey("ed25519", "test-ca");
    for (const kind of KINDS) {
      const parsed = parsePublicKey(FIXED_SK_KEYS[kind]);
      const cert = signCertificate(loadPrivateKey(ca.privatePem), ca.publicBlob, {
        publicKey: parsed.blob,
        serial: 77n,
        type: "user",
        keyId: "alice@example.com [org:acme]",
        principals: ["deploy"],
        validAfter: new Date(Date.now() - 60_000),
        validBefore: new Date(Date.now() + 3600_000),
        extensions: ["permit-pty"],
        criticalOptions: { "verify-required": "" },
      });
      const certType = kind === "ed25519" ? "sk-ssh-ed25519-cert-v01@openssh.com" : "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com";
      expect(cert.startsWith(`${certType} `)).toBe(true);
      const back = parseCertificate(cert);
      expect(back).toMatchObject({ certType, signatureValid: true, serial: 77n, criticalOptions: { "verify-required": "" }, extensions: ["permit-pty"] });
      // The certified key includes the application string.
      expect(back.publicKey.equals(parsed.blob)).toBe(true);
      const path = join(dir, `${kind}-cert.pub`);
      writeFileSync(path, `${cert}\n`);
      const shown = execFileSync("ssh-keygen", ["-L", "-f", path], { encoding: "utf8" });
      expect(shown).toContain(`Type: ${certType} user certificate`);
      expect(shown).toContain(`Public key: ${kind === "ed25519" ? "ED25519-SK" : "ECDSA-SK"}-CERT ${FIXED_SK_FINGERPRINTS[kind]}`);
      expect(shown).toMatch(/Critical Options:\s+verify-required/);
      expect(shown).not.toContain("no-touch-required");
    }
  });
});
