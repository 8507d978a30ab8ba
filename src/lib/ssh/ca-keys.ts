import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from "node:crypto";
import { promisify } from "node:util";
import { fingerprintOf, type SshKeyType } from "./keys.js";
import { blobFromKeyObject } from "./keys.js";

export interface GeneratedCaKey {
  /** PKCS#8 PEM: what gets encrypted at rest. Never log or return it. */
  privatePem: string;
  publicBlob: Buffer;
  publicLine: string;
  fingerprint: string;
}

const generate = promisify(generateKeyPair);

/**
 * A new CA key pair, generated in-process off the event loop (RSA-4096 takes seconds):
 * ed25519, ecdsa (P-256) or rsa (4096 bits).
 */
export async function generateCaKey(type: SshKeyType, comment: string): Promise<GeneratedCaKey> {
  const pair =
    type === "ed25519"
      ? await generate("ed25519")
      : type === "ecdsa"
        ? await generate("ec", { namedCurve: "P-256" })
        : await generate("rsa", { modulusLength: 4096 });
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
