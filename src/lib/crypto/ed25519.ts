import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from "node:crypto";
import { sha256Hex } from "./hash.js";

/** An Ed25519 key pair as PEM (SPKI public, PKCS#8 private); kid: a digest of the public key. */
export interface Ed25519KeyPair {
  kid: string;
  publicKeyPem: string;
  privateKeyPem: string;
}

const kidOf = (publicKeyPem: string) => `ed25519-${sha256Hex(publicKeyPem).slice(0, 16)}`;

export function generateEd25519(): Ed25519KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const publicKeyPem = publicKey.export({ type: "spki", format: "pem" }).toString();
  return { kid: kidOf(publicKeyPem), publicKeyPem, privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
}

/** The public key (PEM) a private key belongs to: binds a stored public key to its sealed private half. */
export const ed25519PublicOf = (privateKeyPem: string): string => createPublicKey(createPrivateKey(privateKeyPem)).export({ type: "spki", format: "pem" }).toString();

export const signEd25519 = (privateKeyPem: string, message: string): string => sign(null, Buffer.from(message), privateKeyPem).toString("base64");

export function verifyEd25519(publicKeyPem: string, message: string, signature: string): boolean {
  try {
    return verify(null, Buffer.from(message), publicKeyPem, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}
