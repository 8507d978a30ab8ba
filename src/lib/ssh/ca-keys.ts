import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { fingerprintOf, type SshKeyType, blobFromKeyObject } from "./keys.js";
import { generateRsaKeyPair } from "./rsa-worker.js";

export interface GeneratedCaKey {
  /** PKCS#8 PEM: what gets encrypted at rest. Never log or return it. */
  privatePem: string;
  publicBlob: Buffer;
  publicLine: string;
  fingerprint: string;
}

/**
 * A new CA key pair: ed25519, ecdsa (P-256) or rsa (4096 bits). The first two take well under a
 * millisecond; RSA takes seconds and runs on its own thread, off the request path and off the
 * libuv pool that password hashing needs.
 */
export async function generateCaKey(type: SshKeyType, comment: string): Promise<GeneratedCaKey> {
  const pair =
    type === "ed25519"
      ? generateKeyPairSync("ed25519")
      : type === "ecdsa"
        ? generateKeyPairSync("ec", { namedCurve: "P-256" })
        : await generateRsaKeyPair(4096);
  const publicBlob = blobFromKeyObject(pair.publicKey);
  const algorithm = publicBlob.subarray(4, 4 + publicBlob.readUInt32BE(0)).toString();
  return {
    privatePem: pair.privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
    publicBlob,
    publicLine: `${algorithm} ${publicBlob.toString("base64")} ${comment}`.trim(),
    fingerprint: fingerprintOf(publicBlob),
  };
}

export const loadPrivateKey = (pem: string): KeyObject => createPrivateKey(pem);
export const publicBlobOf = (privateKey: KeyObject): Buffer => blobFromKeyObject(createPublicKey(privateKey));
