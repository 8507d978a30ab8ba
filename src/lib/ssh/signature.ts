import { sign as nodeSign, verify as nodeVerify, type KeyObject } from "node:crypto";
import { keyObjectFromBlob } from "./keys.js";
import { skSignedData, splitSkPublicBlob, type SkSignatureDetails } from "./sk.js";
import { SshReader, SshWriter } from "./wire.js";

/**
 * An SSH signature blob (`string algorithm ‖ string signature`) made natively: Ed25519 pure,
 * ECDSA with the curve's hash (r and s as mpints), RSA with rsa-sha2-512 — never ssh-rsa/SHA-1,
 * which sshd refuses.
 */
export function signSsh(privateKey: KeyObject, data: Buffer): Buffer {
  const kind = privateKey.asymmetricKeyType;
  if (kind === "ed25519") return new SshWriter().string("ssh-ed25519").string(nodeSign(null, data, privateKey)).toBuffer();
  if (kind === "ec") {
    const curve = privateKey.asymmetricKeyDetails?.namedCurve;
    const [name, hash] = curve === "prime256v1" ? ["nistp256", "sha256"] : curve === "secp384r1" ? ["nistp384", "sha384"] : ["nistp521", "sha512"];
    const sig = nodeSign(hash, data, { key: privateKey, dsaEncoding: "ieee-p1363" });
    const half = sig.length / 2;
    const rs = new SshWriter().mpint(sig.subarray(0, half)).mpint(sig.subarray(half)).toBuffer();
    return new SshWriter().string(`ecdsa-sha2-${name}`).string(rs).toBuffer();
  }
  if (kind === "rsa") return new SshWriter().string("rsa-sha2-512").string(nodeSign("sha512", data, privateKey)).toBuffer();
  throw new Error(`unsupported CA key type ${kind}`);
}

/** Verifies an SSH signature blob against a plain public key blob. */
export function verifySsh(publicBlob: Buffer, data: Buffer, signatureBlob: Buffer): boolean {
  try {
    const { key, algorithm } = keyObjectFromBlob(publicBlob);
    const r = new SshReader(signatureBlob);
    const sigAlg = r.text();
    const sig = r.string();
    if (!r.done) return false;
    if (algorithm === "ssh-ed25519") return sigAlg === "ssh-ed25519" && sig.length === 64 && nodeVerify(null, data, key, sig);
    if (algorithm.startsWith("ecdsa-sha2-")) {
      if (sigAlg !== algorithm) return false;
      const inner = new SshReader(sig);
      const rr = inner.mpint();
      const ss = inner.mpint();
      if (!inner.done) return false;
      const size = algorithm.endsWith("nistp256") ? 32 : algorithm.endsWith("nistp384") ? 48 : 66;
      if (rr.length > size || ss.length > size) return false;
      const p1363 = Buffer.concat([Buffer.alloc(size - rr.length), rr, Buffer.alloc(size - ss.length), ss]);
      const hash = size === 32 ? "sha256" : size === 48 ? "sha384" : "sha512";
      return nodeVerify(hash, data, { key, dsaEncoding: "ieee-p1363" }, p1363);
    }
    if (algorithm === "ssh-rsa") {
      // SHA-1 (ssh-rsa) signatures are refused, as sshd refuses them.
      if (sigAlg === "rsa-sha2-512") return nodeVerify("sha512", data, key, sig);
      if (sigAlg === "rsa-sha2-256") return nodeVerify("sha256", data, key, sig);
    }
    return false;
  } catch {
    return false;
  }
}

/**
 * Verifies a security-key signature blob made over `data` by the sk key `publicBlob`, as sshd and
 * `ssh-keygen -Y verify` do (OpenSSH ssh-ed25519-sk.c, ssh-ecdsa-sk.c). Returns the flags and
 * counter the authenticator signed, or null. What the flags must say is the caller's policy: the
 * signature is valid without a touch.
 */
export function verifySkSsh(publicBlob: Buffer, data: Buffer, signatureBlob: Buffer): SkSignatureDetails | null {
  try {
    const sk = splitSkPublicBlob(publicBlob);
    const r = new SshReader(signatureBlob);
    if (r.text() !== sk.algorithm) return null;
    const sig = r.string();
    const flags = r.byte();
    const counter = r.uint32();
    if (!r.done) return null;
    const signed = skSignedData(sk.application, flags, counter, data);
    const { key } = keyObjectFromBlob(sk.base);
    if (sk.algorithm === "sk-ssh-ed25519@openssh.com") return sig.length === 64 && nodeVerify(null, signed, key, sig) ? { flags, counter } : null;
    const inner = new SshReader(sig);
    const rr = inner.mpint();
    const ss = inner.mpint();
    if (!inner.done || rr.length > 32 || ss.length > 32) return null;
    const p1363 = Buffer.concat([Buffer.alloc(32 - rr.length), rr, Buffer.alloc(32 - ss.length), ss]);
    return nodeVerify("sha256", signed, { key, dsaEncoding: "ieee-p1363" }, p1363) ? { flags, counter } : null;
  } catch {
    return null;
  }
}
