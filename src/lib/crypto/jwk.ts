import { createHash, generateKeyPairSync, type JsonWebKey } from "node:crypto";

export type SigningAlg = "RS256" | "ES256";

export interface PrivateJwk extends JsonWebKey {
  kid: string;
  alg: SigningAlg;
  use: "sig";
}

/** RFC 7638 thumbprint of the public members: a stable, content-derived key id. */
function thumbprint(jwk: JsonWebKey): string {
  const members = jwk.kty === "RSA" ? { e: jwk.e, kty: jwk.kty, n: jwk.n } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y };
  return createHash("sha256").update(JSON.stringify(members)).digest("base64url");
}

/** A fresh signing key as a private JWK (RSA 2048 for RS256, P-256 for ES256). */
export function generateSigningJwk(alg: SigningAlg): PrivateJwk {
  const { privateKey } =
    alg === "RS256" ? generateKeyPairSync("rsa", { modulusLength: 2048 }) : generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = privateKey.export({ format: "jwk" });
  return { ...jwk, kid: thumbprint(jwk), alg, use: "sig" };
}
