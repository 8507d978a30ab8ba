import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildKrl, generateCaKey, loadPrivateKey, parseCertificate, parsePublicKey, signCertificate, verifySshSignature } from "../../src/lib/ssh/index.js";

/** The SSH adapter checked against the real ssh-keygen, both directions. */
const dir = mkdtempSync(join(tmpdir(), "kw-ssh-"));
const keygen = (...args: string[]) => execFileSync("ssh-keygen", args, { encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] });

function userKey(type: "ed25519" | "ecdsa" | "rsa", name: string): { path: string; pub: string } {
  const path = join(dir, name);
  keygen("-q", "-t", type, ...(type === "rsa" ? ["-b", "2048"] : []), "-N", "", "-C", `${name}@test`, "-f", path);
  return { path, pub: readFileSync(`${path}.pub`, "utf8") };
}

describe("public keys", () => {
  it("parses what ssh-keygen makes and computes the same fingerprint", () => {
    for (const type of ["ed25519", "ecdsa", "rsa"] as const) {
      const k = userKey(type, `fp-${type}`);
      const parsed = parsePublicKey(k.pub);
      const expected = keygen("-l", "-E", "sha256", "-f", `${k.path}.pub`).split(" ")[1];
      expect(parsed.fingerprint).toBe(expected);
      expect(parsed.type).toBe(type);
      expect(parsed.comment).toBe(`fp-${type}@test`);
    }
  });

  it("refuses private keys, certificates, DSA, short RSA and garbage with the right code", () => {
    const k = userKey("ed25519", "priv");
    const cases: Array<[string, string]> = [
      [readFileSync(k.path, "utf8"), "WRONG_KEY_MATERIAL"],
      ["ssh-ed25519-cert-v01@openssh.com AAAA", "WRONG_KEY_MATERIAL"],
      ["not a key at all", "SSH_KEY_ERROR"],
      ["", "SSH_KEY_ERROR"],
    ];
    const short = join(dir, "short");
    keygen("-q", "-t", "rsa", "-b", "1024", "-N", "", "-f", short);
    cases.push([readFileSync(`${short}.pub`, "utf8"), "SSH_KEY_ERROR"]);
    for (const [input, code] of cases) expect(() => parsePublicKey(input)).toThrow(expect.objectContaining({ code }));
  });
});

describe("certificates", () => {
  it("every CA type signs a certificate that ssh-keygen -L reads and verifies", async () => {
    const subject = userKey("ed25519", "subject");
    const parsed = parsePublicKey(subject.pub);
    for (const caType of ["ed25519", "ecdsa", "rsa"] as const) {
      const ca = await generateCaKey(caType, "test-ca");
      const line = signCertificate(loadPrivateKey(ca.privatePem), ca.publicBlob, {
        publicKey: parsed.blob,
        serial: 4242n,
        type: "user",
        keyId: "alice@example.com [org:acme]",
        principals: ["root", "deploy"],
        validAfter: new Date(Date.now() - 60_000),
        validBefore: new Date(Date.now() + 3600_000),
        extensions: ["permit-pty", "permit-X11-forwarding"],
        criticalOptions: { "source-address": "127.0.0.1/32" },
      });
      const file = join(dir, `cert-${caType}-cert.pub`);
      writeFileSync(file, line + "\n");
      const out = keygen("-L", "-f", file);
      expect(out).toContain("user certificate");
      expect(out).toContain('Key ID: "alice@example.com [org:acme]"');
      expect(out).toContain("Serial: 4242");
      expect(out).toMatch(/Principals:\s+root\s+deploy/);
      expect(out).toMatch(/Extensions:\s+permit-X11-forwarding\s+permit-pty/);
      expect(out).toContain("source-address 127.0.0.1/32");
      if (caType === "rsa") expect(out).toContain("using rsa-sha2-512");
      const back = parseCertificate(line);
      expect(back.signatureValid).toBe(true);
      expect(back.principals).toEqual(["root", "deploy"]);
      expect(back.serial).toBe(4242n);
      expect(back.publicKey.equals(parsed.blob)).toBe(true);
    }
  });

  it("detects a tampered certificate", async () => {
    const ca = await generateCaKey("ed25519", "ca");
    const line = signCertificate(loadPrivateKey(ca.privatePem), ca.publicBlob, {
      publicKey: parsePublicKey(userKey("ecdsa", "tamper").pub).blob,
      serial: 7n,
      type: "host",
      keyId: "host",
      principals: ["h.example.com"],
      validAfter: new Date(),
      validBefore: new Date(Date.now() + 1000_000),
    });
    const blob = Buffer.from(line.split(" ")[1]!, "base64");
    blob[blob.length - 10]! ^= 1;
    expect(parseCertificate(`${line.split(" ")[0]} ${blob.toString("base64")}`).signatureValid).toBe(false);
  });
});

describe("SSHSIG proof of possession", () => {
  it("verifies ssh-keygen -Y sign signatures for every key type, armored or base64", () => {
    for (const type of ["ed25519", "ecdsa", "rsa"] as const) {
      const k = userKey(type, `sig-${type}`);
      const challenge = join(dir, `challenge-${type}.txt`);
      writeFileSync(challenge, "Please sign this to verify SSH key ownership: abc123\n");
      keygen("-Y", "sign", "-n", "file", "-f", k.path, challenge);
      const armored = readFileSync(`${challenge}.sig`, "utf8");
      const blob = parsePublicKey(k.pub).blob;
      const msg = Buffer.from("Please sign this to verify SSH key ownership: abc123\n");
      expect(verifySshSignature(armored, msg, blob, "file")).toBe(true);
      expect(verifySshSignature(Buffer.from(armored).toString("base64"), msg, blob, "file")).toBe(true);
      expect(verifySshSignature(armored, Buffer.from("other message\n"), blob, "file")).toBe(false);
      expect(verifySshSignature(armored, msg, blob, "git")).toBe(false);
    }
  });
});

describe("KRL", () => {
  it("builds a list ssh-keygen -Q reads: the revoked certificate is REVOKED, another is ok", async () => {
    const ca = await generateCaKey("ed25519", "krl-ca");
    const make = (serial: bigint, name: string) => {
      const line = signCertificate(loadPrivateKey(ca.privatePem), ca.publicBlob, {
        publicKey: parsePublicKey(userKey("ed25519", name).pub).blob,
        serial,
        type: "user",
        keyId: name,
        principals: ["u"],
        validAfter: new Date(),
        validBefore: new Date(Date.now() + 1000_000),
      });
      const file = join(dir, `${name}-cert.pub`);
      writeFileSync(file, line + "\n");
      return file;
    };
    const revoked = make(100n, "revoked");
    const fine = make(101n, "fine");
    const krl = join(dir, "revoked.krl");
    writeFileSync(krl, buildKrl([{ caKey: ca.publicBlob, serials: [5000n, 100n, 100n] }], { version: 3n, generatedAt: new Date() }));
    const check = spawnSync("ssh-keygen", ["-Q", "-f", krl, revoked], { encoding: "utf8" });
    expect(check.status).toBe(1);
    expect(check.stdout).toContain("REVOKED");
    expect(keygen("-Q", "-f", krl, fine)).toMatch(/ok$/m);
    const dump = keygen("-Q", "-l", "-f", krl, fine);
    expect(dump).toContain("# KRL version 3");
    expect(dump).toMatch(/serial: 100\b/);
  });
});
