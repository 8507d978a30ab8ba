import { createDecipheriv, createHash, createPrivateKey, createPublicKey, privateDecrypt, constants, sign, verify, type KeyObject } from "node:crypto";

/**
 * The cryptographic primitives XML Signature and XML Encryption need (used by src/lib/saml), kept
 * here so that node:crypto has one importer (ARCHITECTURE rule 8). No XML in this file: bytes in,
 * bytes out; the SAML adapter decides which algorithm identifiers map to which call.
 */

export type XmlDsigHash = "sha256" | "sha384" | "sha512";
export type XmlDsigKeyType = "rsa" | "ec";

const publicKeyOf = (pem: string): KeyObject => createPublicKey(pem);

/** Verifies an XML-DSig SignatureValue (RSA PKCS#1 v1.5, or ECDSA with r||s as XML-DSig encodes it). */
export function verifyXmlDsig(kind: XmlDsigKeyType, hash: XmlDsigHash, publicKeyOrCertPem: string, data: string, signatureB64: string): boolean {
  const key = publicKeyOf(publicKeyOrCertPem);
  if (key.asymmetricKeyType !== kind) return false; // an RSA algorithm never verifies with an EC key, nor the reverse
  const signature = Buffer.from(signatureB64.replace(/\s+/g, ""), "base64");
  return kind === "ec"
    ? verify(hash, Buffer.from(data), { key, dsaEncoding: "ieee-p1363" }, signature)
    : verify(hash, Buffer.from(data), key, signature);
}

/** Signs for XML-DSig or the SAML HTTP-Redirect binding (the same encodings), base64 out. */
export function signXmlDsig(hash: XmlDsigHash, privateKeyPem: string, data: string): string {
  const key = createPrivateKey(privateKeyPem);
  const signature = key.asymmetricKeyType === "ec" ? sign(hash, Buffer.from(data), { key, dsaEncoding: "ieee-p1363" }) : sign(hash, Buffer.from(data), key);
  return signature.toString("base64");
}

/** The key type of a private key ("rsa", "ec", …): decides the signature algorithm a signer announces. */
export const privateKeyType = (privateKeyPem: string): string => createPrivateKey(privateKeyPem).asymmetricKeyType ?? "unknown";

/** RSA-OAEP key transport (XML-Enc rsa-oaep-mgf1p / xmlenc11 rsa-oaep with one hash for digest and MGF1). PKCS#1 v1.5 is not offered. */
export function rsaOaepUnwrap(privateKeyPem: string, wrapped: Buffer, hash: "sha1" | "sha256" | "sha384" | "sha512"): Buffer {
  return privateDecrypt({ key: createPrivateKey(privateKeyPem), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash }, wrapped);
}

export type XmlEncBlockCipher = "aes-128-cbc" | "aes-192-cbc" | "aes-256-cbc" | "aes-128-gcm" | "aes-192-gcm" | "aes-256-gcm";

/**
 * Decrypts an XML-Enc CipherValue: IV first; for GCM a 12-byte IV and the 16-byte tag last; for CBC the
 * XML-Enc padding (last byte = pad length, the others arbitrary, so not PKCS#7-checkable).
 */
export function xmlEncDecrypt(cipher: XmlEncBlockCipher, key: Buffer, data: Buffer): Buffer {
  if (cipher.endsWith("gcm")) {
    if (data.length < 12 + 16) throw new Error("ciphertext too short");
    const decipher = createDecipheriv(cipher as "aes-128-gcm", key, data.subarray(0, 12));
    decipher.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]);
  }
  if (data.length < 32 || (data.length - 16) % 16 !== 0) throw new Error("ciphertext length is not a whole number of blocks");
  const decipher = createDecipheriv(cipher, key, data.subarray(0, 16)).setAutoPadding(false);
  const plain = Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]);
  const pad = plain[plain.length - 1]!;
  if (pad < 1 || pad > 16) throw new Error("bad padding");
  return plain.subarray(0, plain.length - pad);
}

/** An XML-DSig DigestValue: the base64 digest of the canonical bytes. */
export const xmlDigest = (hash: "sha256" | "sha384" | "sha512", data: string): string => createHash(hash).update(data, "utf8").digest("base64");
