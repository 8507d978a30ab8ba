import { createPrivateKey, webcrypto } from "node:crypto";

export interface ClientAssertionKey {
  key: CryptoKey;
  alg: "RS256" | "ES256" | "ES384" | "ES512";
}

/** Whether a PEM is a private key this service can sign client assertions (private_key_jwt) with. */
export function clientAssertionAlg(pem: string): ClientAssertionKey["alg"] | null {
  try {
    const k = createPrivateKey(pem);
    if (k.asymmetricKeyType === "rsa") return "RS256";
    if (k.asymmetricKeyType === "ec") {
      const curve = k.asymmetricKeyDetails?.namedCurve;
      return curve === "prime256v1" ? "ES256" : curve === "secp384r1" ? "ES384" : curve === "secp521r1" ? "ES512" : null;
    }
    return null;
  } catch {
    return null;
  }
}

/** A PKCS#8/PEM private key as a WebCrypto signing key, for signing client assertions (RFC 7523). */
export async function importClientAssertionKey(pem: string): Promise<ClientAssertionKey> {
  const alg = clientAssertionAlg(pem);
  if (!alg) throw new Error("unsupported client assertion key");
  const k = createPrivateKey(pem);
  const algorithm = alg === "RS256" ? { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } : { name: "ECDSA", namedCurve: alg === "ES256" ? "P-256" : alg === "ES384" ? "P-384" : "P-521" };
  const der = k.export({ format: "der", type: "pkcs8" });
  return { key: await webcrypto.subtle.importKey("pkcs8", der, algorithm, false, ["sign"]), alg };
}
