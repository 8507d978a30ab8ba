import { createHmac, hash, hkdfSync, timingSafeEqual } from "node:crypto";

/**
 * SHA-256 of a high-entropy token: how every token shown once is stored (sessions, links, keys).
 * One-shot `hash` (every authenticated request makes one): a fifth of createHash's cost for a token.
 */
export const sha256Hex = (value: string | Buffer): string => hash("sha256", value, "hex");

export const hmacSha256Hex = (key: Buffer | string, value: string): string =>
  createHmac("sha256", key).update(value).digest("hex");

/** Constant-time comparison of two strings; unequal lengths compare a dummy to keep timing flat. */
export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ba.length !== bb.length) {
    timingSafeEqual(ba, ba);
    return false;
  }
  return timingSafeEqual(ba, bb);
}

/** A purpose-bound key derived from a master key (HKDF-SHA256), so one master never keys two uses. */
export const deriveKey = (master: Buffer, purpose: string): Buffer => Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), purpose, 32));

/** RFC 7636 S256: the code challenge sent with an authorization request for a PKCE verifier. */
export const pkceChallenge = (verifier: string): string => hash("sha256", verifier, "base64url");
