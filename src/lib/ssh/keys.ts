import { createHash, createPublicKey, type KeyObject } from "node:crypto";
import sshpk from "sshpk";
import { isSkAlgorithm, SK_ALGORITHMS, splitSkPublicBlob } from "./sk.js";
import { SshReader, SshWriter } from "./wire.js";

/** The types a CA key may have. */
export type SshKeyType = "ed25519" | "ecdsa" | "rsa";
/** The types a person's key may have: also FIDO2 security keys (`-t ed25519-sk`, `-t ecdsa-sk`). */
export type UserKeyType = SshKeyType | "sk-ed25519" | "sk-ecdsa";

export interface ParsedPublicKey {
  type: UserKeyType;
  /** The OpenSSH algorithm name: ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa, sk-ssh-ed25519@openssh.com … */
  algorithm: string;
  bits: number;
  /** The plain public key blob (RFC 4253 §6.6). */
  blob: Buffer;
  /** `<algorithm> <base64>` without comment. */
  line: string;
  comment: string | null;
  /** SHA256:<base64, unpadded>, as ssh-keygen prints it. */
  fingerprint: string;
  /** A security key's FIDO application ("ssh:"); null for other keys. */
  application: string | null;
}

export class SshKeyError extends Error {
  constructor(
    message: string,
    readonly code: "WRONG_KEY_MATERIAL" | "SSH_KEY_ERROR",
  ) {
    super(message);
    this.name = "SshKeyError";
  }
}

const CURVES: Record<string, { name: string; jwk: string; hash: string; bits: number }> = {
  nistp256: { name: "nistp256", jwk: "P-256", hash: "sha256", bits: 256 },
  nistp384: { name: "nistp384", jwk: "P-384", hash: "sha384", bits: 384 },
  nistp521: { name: "nistp521", jwk: "P-521", hash: "sha512", bits: 521 },
};

export const fingerprintOf = (blob: Buffer): string => `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;

/**
 * Parses a user-supplied public key. Guard order: refuse certificates and private keys by their
 * shape (never echoing them back), parse, then refuse weak or unsupported types.
 */
export function parsePublicKey(input: string): ParsedPublicKey {
  const text = input.trim();
  if (text.length === 0 || text.length > 16_384) throw new SshKeyError("Provide one OpenSSH public key", "SSH_KEY_ERROR");
  if (/PRIVATE KEY/.test(text)) throw new SshKeyError("That is a private key: send the public key (the .pub file) and keep the private one secret", "WRONG_KEY_MATERIAL");
  if (/-cert-v01@openssh\.com/.test(text)) throw new SshKeyError("That is a certificate, not a public key", "WRONG_KEY_MATERIAL");
  const [first] = text.split(/\s+/, 1);
  if (first && isSkAlgorithm(first)) return parseSkPublicKey(text);
  let key: sshpk.Key;
  try {
    key = sshpk.parseKey(text, "auto");
  } catch {
    throw new SshKeyError("Not a valid SSH public key", "SSH_KEY_ERROR");
  }
  if (sshpk.PrivateKey.isPrivateKey(key, [1, 0])) throw new SshKeyError("That is a private key: send the public key instead", "WRONG_KEY_MATERIAL");
  // sshpk normalizes what it parses (pads a short key, drops trailing bytes): check what was sent too.
  const sent = /^(\S+)\s+([A-Za-z0-9+/]+={0,2})(\s|$)/.exec(text);
  if (sent) assertSoundKey(Buffer.from(sent[2]!, "base64"));
  const blob = key.toBuffer("rfc4253", {}) as Buffer;
  assertSoundKey(blob);
  const reader = new SshReader(blob);
  const algorithm = reader.text();
  let type: SshKeyType;
  let bits = key.size;
  if (key.type === "ed25519") type = "ed25519";
  else if (key.type === "ecdsa") {
    type = "ecdsa";
    bits = CURVES[reader.text()]?.bits ?? key.size;
  } else if (key.type === "rsa") {
    type = "rsa";
    if (key.size < 2048) throw new SshKeyError(`RSA keys must have at least 2048 bits (this one has ${key.size})`, "SSH_KEY_ERROR");
  } else {
    throw new SshKeyError(`Key type ${key.type} is not accepted: use ed25519, ecdsa, rsa (≥ 2048 bits) or a security key (ed25519-sk, ecdsa-sk)`, "SSH_KEY_ERROR");
  }
  const comment = text.split(/\s+/).slice(2).join(" ") || null;
  return { type, algorithm, bits, blob, line: `${algorithm} ${blob.toString("base64")}`, comment, fingerprint: fingerprintOf(blob), application: null };
}

/** A FIDO2 security-key public key line (sshpk does not read them): `<algorithm> <base64> [comment]`. */
function parseSkPublicKey(text: string): ParsedPublicKey {
  const [algorithm, b64, ...rest] = text.split(/\s+/);
  if (!b64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new SshKeyError("Not a valid SSH public key", "SSH_KEY_ERROR");
  const blob = Buffer.from(b64, "base64");
  assertSoundKey(blob);
  const declared = new SshReader(blob).text();
  if (declared !== algorithm) throw new SshKeyError(`Not a valid SSH public key: the line says ${algorithm} but the key is ${declared}`, "SSH_KEY_ERROR");
  const sk = splitSkPublicBlob(blob);
  const type = SK_ALGORITHMS[sk.algorithm].type;
  // The line as stored is re-encoded: one key, one spelling.
  return { type, algorithm: sk.algorithm, bits: 256, blob, line: `${algorithm} ${blob.toString("base64")}`, comment: rest.join(" ") || null, fingerprint: fingerprintOf(blob), application: sk.application };
}

const MIN_RSA_BITS = 2048;
const MAX_RSA_BITS = 16_384;
const bigintOf = (b: Buffer): bigint => (b.length === 0 ? 0n : BigInt(`0x${b.toString("hex")}`));

/**
 * Refuses a key that parses but cannot be sound (issue 12): an Ed25519 key that is not 32 bytes, an
 * ECDSA point that is compressed, of the wrong size or not on its curve, an RSA key whose exponent
 * is even or below 3 or whose modulus is even or under 2048 bits, and anything after the key's
 * fields. Registration and signing both parse through here, so keys stored before these checks
 * are refused at signing too.
 */
export function assertSoundKey(blob: Buffer): void {
  const bad = (why: string) => new SshKeyError(`Not a usable SSH public key: ${why}`, "SSH_KEY_ERROR");
  if (isSkBlob(blob)) return assertSoundKey(skBaseKey(blob));
  const r = new SshReader(blob);
  try {
    const algorithm = r.text();
    if (algorithm === "ssh-ed25519") {
      if (r.string().length !== 32) throw bad("an Ed25519 public key is exactly 32 bytes");
    } else if (algorithm.startsWith("ecdsa-sha2-")) {
      const name = r.text();
      const curve = CURVES[name];
      if (!curve || algorithm !== `ecdsa-sha2-${name}`) throw bad("unknown or mismatched ECDSA curve");
      const q = r.string();
      const size = Math.ceil(curve.bits / 8);
      if (q.length !== 1 + 2 * size || q[0] !== 4) throw bad(`the ECDSA point must be uncompressed and ${1 + 2 * size} bytes`);
      try {
        const b64 = (b: Buffer) => b.toString("base64url");
        createPublicKey({ key: { kty: "EC", crv: curve.jwk, x: b64(q.subarray(1, 1 + size)), y: b64(q.subarray(1 + size)) }, format: "jwk" });
      } catch {
        throw bad("the ECDSA point is not on its curve");
      }
    } else if (algorithm === "ssh-rsa") {
      const e = bigintOf(r.mpint());
      const n = bigintOf(r.mpint());
      if (e < 3n || e % 2n === 0n) throw bad("the RSA public exponent must be odd and at least 3");
      const bits = n === 0n ? 0 : n.toString(2).length;
      if (n % 2n === 0n) throw bad("the RSA modulus must be odd");
      if (bits < MIN_RSA_BITS) throw bad(`RSA keys must have at least ${MIN_RSA_BITS} bits (this one has ${bits})`);
      if (bits > MAX_RSA_BITS) throw bad(`RSA keys may have at most ${MAX_RSA_BITS} bits`);
    } else {
      throw bad(`key type ${algorithm} is not accepted: use ed25519, ecdsa, rsa or a security key (ed25519-sk, ecdsa-sk)`);
    }
  } catch (e) {
    if (e instanceof SshKeyError) throw e;
    throw bad("the key data is truncated or malformed");
  }
  if (!r.done) throw bad("unexpected data after the key");
}

/** A security key's plain key inside, to check like any other (its application checked on the way). */
function skBaseKey(blob: Buffer): Buffer {
  try {
    return splitSkPublicBlob(blob).base;
  } catch (e) {
    const why = e instanceof Error && /application|nistp256/.test(e.message) ? e.message : "the key data is truncated or malformed";
    throw new SshKeyError(`Not a usable SSH public key: ${why}`, "SSH_KEY_ERROR");
  }
}

function isSkBlob(blob: Buffer): boolean {
  try {
    return isSkAlgorithm(new SshReader(blob).text());
  } catch {
    return false;
  }
}

type VerifyingKey = { key: KeyObject; algorithm: string; hash: string | null };
// The same few keys verify again and again (a CA's key, checked after each signature it makes):
// a JWK import per check costs more than an Ed25519 verification. Bounded, oldest out first.
const verifyingKeys = new Map<string, VerifyingKey>();
const VERIFYING_KEYS_MAX = 256;

/** A node:crypto KeyObject for a plain OpenSSH public key blob (to verify signatures natively). */
export function keyObjectFromBlob(blob: Buffer): VerifyingKey {
  const id = blob.toString("base64");
  const known = verifyingKeys.get(id);
  if (known) return known;
  const made = importPublicBlob(blob);
  if (verifyingKeys.size >= VERIFYING_KEYS_MAX) verifyingKeys.delete(verifyingKeys.keys().next().value!);
  verifyingKeys.set(id, made);
  return made;
}

function importPublicBlob(blob: Buffer): VerifyingKey {
  const r = new SshReader(blob);
  const algorithm = r.text();
  const b64 = (b: Buffer) => b.toString("base64url");
  if (algorithm === "ssh-ed25519") {
    return { key: createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: b64(r.string()) }, format: "jwk" }), algorithm, hash: null };
  }
  if (algorithm.startsWith("ecdsa-sha2-")) {
    const curve = CURVES[r.text()];
    const q = r.string();
    if (!curve || q[0] !== 4) throw new SshKeyError("Unsupported ECDSA key", "SSH_KEY_ERROR");
    const size = (q.length - 1) / 2;
    const jwk = { kty: "EC", crv: curve.jwk, x: b64(q.subarray(1, 1 + size)), y: b64(q.subarray(1 + size)) };
    return { key: createPublicKey({ key: jwk, format: "jwk" }), algorithm, hash: curve.hash };
  }
  if (algorithm === "ssh-rsa") {
    const e = r.mpint();
    const n = r.mpint();
    return { key: createPublicKey({ key: { kty: "RSA", n: b64(n), e: b64(e) }, format: "jwk" }), algorithm, hash: "sha512" };
  }
  throw new SshKeyError(`Unsupported key algorithm ${algorithm}`, "SSH_KEY_ERROR");
}

/** The plain OpenSSH public key blob of a node:crypto public key. */
export function blobFromKeyObject(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: "jwk" }) as { kty: string; crv?: string; x?: string; y?: string; n?: string; e?: string };
  const un = (s?: string) => Buffer.from(s ?? "", "base64url");
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") return new SshWriter().string("ssh-ed25519").string(un(jwk.x)).toBuffer();
  if (jwk.kty === "EC") {
    const curve = Object.values(CURVES).find((c) => c.jwk === jwk.crv);
    if (!curve) throw new Error(`unsupported curve ${jwk.crv}`);
    const q = Buffer.concat([Buffer.from([4]), un(jwk.x), un(jwk.y)]);
    return new SshWriter().string(`ecdsa-sha2-${curve.name}`).string(curve.name).string(q).toBuffer();
  }
  if (jwk.kty === "RSA") return new SshWriter().string("ssh-rsa").mpint(un(jwk.e)).mpint(un(jwk.n)).toBuffer();
  throw new Error(`unsupported key type ${jwk.kty}`);
}

export const algorithmOf = (blob: Buffer): string => new SshReader(blob).text();
