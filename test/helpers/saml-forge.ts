import { constants, createCipheriv, publicEncrypt, randomBytes, sign, type CipherGCM } from "node:crypto";
import { SignedXml } from "xml-crypto";
import type { ReplayStore } from "../../src/lib/saml/index.js";

/**
 * Builds SAML responses the way an attacker (or a test IdP key) would: templates shaped like
 * SimpleSAMLphp's, signed with any key and any algorithm, encrypted to any SP certificate.
 */
export const P = "urn:oasis:names:tc:SAML:2.0:protocol";
export const A = "urn:oasis:names:tc:SAML:2.0:assertion";
const EXC = "http://www.w3.org/2001/10/xml-exc-c14n#";
const ENV = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";
export const RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
export const RSA_SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1";
export const ECDSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256";
export const SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256";
export const SHA1 = "http://www.w3.org/2000/09/xmldsig#sha1";

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

export interface AssertionShape {
  id?: string;
  issuer: string;
  nameId?: string;
  audience: string;
  recipient: string;
  inResponseTo?: string;
  now: number;
  lifetimeSeconds?: number;
  attributes?: Record<string, string[]>;
}

export function assertionXml(o: AssertionShape): string {
  const id = o.id ?? `_a${randomBytes(10).toString("hex")}`;
  const end = iso(o.now + (o.lifetimeSeconds ?? 300) * 1000);
  const irt = o.inResponseTo ? ` InResponseTo="${o.inResponseTo}"` : "";
  const attrs = Object.entries(o.attributes ?? { email: [o.nameId ?? "alice@example.com"] })
    .map(([k, vs]) => `<saml:Attribute Name="${k}">${vs.map((v) => `<saml:AttributeValue>${v}</saml:AttributeValue>`).join("")}</saml:Attribute>`)
    .join("");
  return (
    `<saml:Assertion xmlns:saml="${A}" ID="${id}" Version="2.0" IssueInstant="${iso(o.now)}"><saml:Issuer>${o.issuer}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${o.nameId ?? "alice@example.com"}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${end}" Recipient="${o.recipient}"${irt}/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${iso(o.now - 30_000)}" NotOnOrAfter="${end}"><saml:AudienceRestriction><saml:Audience>${o.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(o.now)}" SessionIndex="_s1"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:Password</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `<saml:AttributeStatement>${attrs}</saml:AttributeStatement></saml:Assertion>`
  );
}

export interface ResponseShape {
  id?: string;
  issuer: string;
  destination: string;
  inResponseTo?: string;
  now: number;
  status?: string;
  inner: string;
}

export function responseXml(o: ResponseShape): string {
  const irt = o.inResponseTo ? ` InResponseTo="${o.inResponseTo}"` : "";
  return (
    `<samlp:Response xmlns:samlp="${P}" xmlns:saml="${A}" ID="${o.id ?? `_r${randomBytes(10).toString("hex")}`}" Version="2.0" IssueInstant="${iso(o.now)}" Destination="${o.destination}"${irt}>` +
    `<saml:Issuer>${o.issuer}</saml:Issuer><samlp:Status><samlp:StatusCode Value="${o.status ?? "urn:oasis:names:tc:SAML:2.0:status:Success"}"/></samlp:Status>${o.inner}</samlp:Response>`
  );
}

export interface SignOptions {
  keyPem: string;
  /** Put this certificate in KeyInfo (as an attacker would, hoping it is trusted). */
  keyInfoCertPem?: string;
  algorithm?: string;
  digest?: string;
  canonicalization?: string;
}

/** Signs the element with this ID (enveloped, after its Issuer), as an IdP does. */
export function signElement(xml: string, id: string, o: SignOptions): string {
  const sig = new SignedXml({
    privateKey: o.keyPem,
    publicCert: o.keyInfoCertPem,
    signatureAlgorithm: o.algorithm ?? RSA_SHA256,
    canonicalizationAlgorithm: o.canonicalization ?? EXC,
    getKeyInfoContent: o.keyInfoCertPem ? SignedXml.getKeyInfoContent : () => null,
  });
  if (o.algorithm === ECDSA_SHA256) {
    sig.SignatureAlgorithms[ECDSA_SHA256] = class {
      getSignature(signedInfo: unknown, key: unknown): string {
        return signEcdsa(String(signedInfo), String(key));
      }
      verifySignature(): boolean {
        return false;
      }
      getAlgorithmName(): string {
        return ECDSA_SHA256;
      }
    } as unknown as (typeof sig.SignatureAlgorithms)[string];
  }
  sig.addReference({ xpath: `//*[@ID='${id}']`, transforms: [ENV, o.canonicalization ?? EXC], digestAlgorithm: o.digest ?? SHA256 });
  sig.computeSignature(xml, { prefix: "ds", location: { reference: `//*[@ID='${id}']/*[local-name()='Issuer']`, action: "after" } });
  return sig.getSignedXml();
}

function signEcdsa(data: string, keyPem: string): string {
  return sign("sha256", Buffer.from(data), { key: keyPem, dsaEncoding: "ieee-p1363" }).toString("base64");
}

/** An EncryptedAssertion of `assertion` to the SP's certificate (RSA-OAEP, AES-GCM or AES-CBC), as an IdP makes it. */
export function encryptAssertion(assertion: string, spCertPem: string, cipher: "aes-256-gcm" | "aes-128-cbc" = "aes-256-gcm", keyTransport = "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"): string {
  const gcm = cipher === "aes-256-gcm";
  const key = randomBytes(gcm ? 32 : 16);
  const iv = randomBytes(gcm ? 12 : 16);
  const c = createCipheriv(cipher, key, iv);
  const body = Buffer.concat([c.update(assertion, "utf8"), c.final()]);
  const data = gcm ? Buffer.concat([iv, body, (c as CipherGCM).getAuthTag()]) : Buffer.concat([iv, body]);
  const wrapped =
    keyTransport.endsWith("rsa-1_5")
      ? publicEncrypt({ key: spCertPem, padding: constants.RSA_PKCS1_PADDING }, key)
      : publicEncrypt({ key: spCertPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha1" }, key);
  const alg = gcm ? "http://www.w3.org/2009/xmlenc11#aes256-gcm" : "http://www.w3.org/2001/04/xmlenc#aes128-cbc";
  return (
    `<saml:EncryptedAssertion><xenc:EncryptedData xmlns:xenc="http://www.w3.org/2001/04/xmlenc#" Type="http://www.w3.org/2001/04/xmlenc#Element">` +
    `<xenc:EncryptionMethod Algorithm="${alg}"/><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><xenc:EncryptedKey><xenc:EncryptionMethod Algorithm="${keyTransport}"/>` +
    `<xenc:CipherData><xenc:CipherValue>${wrapped.toString("base64")}</xenc:CipherValue></xenc:CipherData></xenc:EncryptedKey></ds:KeyInfo>` +
    `<xenc:CipherData><xenc:CipherValue>${data.toString("base64")}</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData></saml:EncryptedAssertion>`
  );
}

/** The replay store the SSO module will back with Redis or the database, in memory. */
export function memoryReplay(): ReplayStore & { ids: Map<string, Date> } {
  const ids = new Map<string, Date>();
  return {
    ids,
    seen(id, notOnOrAfter) {
      const had = ids.has(id);
      ids.set(id, notOnOrAfter);
      return Promise.resolve(had);
    },
  };
}
