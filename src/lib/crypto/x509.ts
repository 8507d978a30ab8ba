import { createHash, createSign, generateKeyPairSync, randomBytes, X509Certificate } from "node:crypto";

/**
 * Self-signed X.509 certificates for keys Keyward holds itself (a SAML connection's SP signing and
 * encryption keys): the certificate only carries the public key to the IdP, which pins it, so no
 * CA, extensions or revocation. DER built by hand (node:crypto reads certificates but makes none).
 */

const der = (tag: number, body: Buffer): Buffer => {
  const n = body.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, body]);
};
const seq = (...parts: Buffer[]) => der(0x30, Buffer.concat(parts));
const oid = (dotted: string): Buffer => {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const out = [a! * 40 + b!];
  for (const n of rest) {
    const bytes = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) bytes.unshift((v & 0x7f) | 0x80);
    out.push(...bytes);
  }
  return der(0x06, Buffer.from(out));
};
const time = (d: Date): Buffer => {
  const iso = d.toISOString().replace(/[-:T]/g, "").slice(0, 14) + "Z";
  // UTCTime until 2049, GeneralizedTime after (RFC 5280 §4.1.2.5).
  return d.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(iso.slice(2))) : der(0x18, Buffer.from(iso));
};
const name = (cn: string) => seq(der(0x31, seq(oid("2.5.4.3"), der(0x0c, Buffer.from(cn.slice(0, 64))))));

export interface SelfSignedKeyPair {
  keyPem: string;
  certPem: string;
}

/** A fresh RSA-2048 key and a SHA-256 self-signed certificate for it, valid `years` from `now`. */
export function generateSelfSignedRsa(commonName: string, now: Date, years = 10): SelfSignedKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const alg = seq(oid("1.2.840.113549.1.1.11"), Buffer.from([0x05, 0x00]));
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(now.getUTCFullYear() + years);
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    alg,
    name(commonName),
    seq(time(new Date(now.getTime() - 60_000)), time(notAfter)),
    name(commonName),
    publicKey.export({ type: "spki", format: "der" }),
  );
  const signature = createSign("sha256").update(tbs).sign(privateKey);
  const cert = seq(tbs, alg, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const b64 = cert.toString("base64").replace(/.{64}/g, "$&\n").replace(/\n$/, "");
  return { keyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), certPem: `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n` };
}

/** The public facts of a certificate an admin compares with another system's console. */
export interface CertificateFacts {
  /** SHA-256 of the DER, colon-separated upper-case hex. */
  fingerprintSha256: string;
  subjectCn: string | null;
  /** null only when the certificate cannot be read as X.509. */
  notBefore: Date | null;
  notAfter: Date | null;
}

/** A PEM certificate's fingerprint, subject CN and validity; an unreadable one still gets the fingerprint of its bytes. */
export function certificateFacts(pem: string): CertificateFacts {
  try {
    const x = new X509Certificate(pem);
    const cn = x.subject.split("\n").find((l) => l.startsWith("CN="));
    return { fingerprintSha256: x.fingerprint256, subjectCn: cn ? cn.slice(3) : null, notBefore: new Date(x.validFrom), notAfter: new Date(x.validTo) };
  } catch {
    const der = Buffer.from(pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, ""), "base64");
    const hex = createHash("sha256").update(der).digest("hex").toUpperCase();
    return { fingerprintSha256: hex.match(/../g)!.join(":"), subjectCn: null, notBefore: null, notAfter: null };
  }
}
