import { rsaOaepUnwrap, xmlEncDecrypt, type XmlEncBlockCipher } from "../crypto/index.js";
import { SamlError } from "./errors.js";
import { NS, attr, children, is, optionalChild, requiredChild, text } from "./xml.js";

/**
 * XML Encryption of a SAML EncryptedAssertion: RSA-OAEP key transport (never RSA PKCS#1 v1.5, the
 * Bleichenbacher oracle) and AES-CBC or AES-GCM content. Returns the plaintext XML, which the
 * caller parses with the same hardened parser and still requires to be signed.
 */

const BLOCK: Record<string, XmlEncBlockCipher> = {
  "http://www.w3.org/2001/04/xmlenc#aes128-cbc": "aes-128-cbc",
  "http://www.w3.org/2001/04/xmlenc#aes192-cbc": "aes-192-cbc",
  "http://www.w3.org/2001/04/xmlenc#aes256-cbc": "aes-256-cbc",
  "http://www.w3.org/2009/xmlenc11#aes128-gcm": "aes-128-gcm",
  "http://www.w3.org/2009/xmlenc11#aes192-gcm": "aes-192-gcm",
  "http://www.w3.org/2009/xmlenc11#aes256-gcm": "aes-256-gcm",
};

const OAEP_DIGEST: Record<string, "sha1" | "sha256" | "sha384" | "sha512"> = {
  "http://www.w3.org/2000/09/xmldsig#sha1": "sha1",
  "http://www.w3.org/2001/04/xmlenc#sha256": "sha256",
  "http://www.w3.org/2001/04/xmldsig-more#sha384": "sha384",
  "http://www.w3.org/2001/04/xmlenc#sha512": "sha512",
};

const MGF1: Record<string, "sha1" | "sha256" | "sha384" | "sha512"> = {
  "http://www.w3.org/2009/xmlenc11#mgf1sha1": "sha1",
  "http://www.w3.org/2009/xmlenc11#mgf1sha256": "sha256",
  "http://www.w3.org/2009/xmlenc11#mgf1sha384": "sha384",
  "http://www.w3.org/2009/xmlenc11#mgf1sha512": "sha512",
};

const cipherValue = (el: Element): Buffer => {
  const value = text(requiredChild(requiredChild(el, NS.xenc, "CipherData"), NS.xenc, "CipherValue")).replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw new SamlError("SAML_DECRYPTION_FAILED", "CipherValue is not base64");
  return Buffer.from(value, "base64");
};

function unwrapKey(encryptedKey: Element, privateKeyPem: string): Buffer {
  const method = requiredChild(encryptedKey, NS.xenc, "EncryptionMethod");
  const alg = attr(method, "Algorithm");
  const digestMethod = optionalChild(method, NS.ds, "DigestMethod");
  const digest = digestMethod ? OAEP_DIGEST[attr(digestMethod, "Algorithm") ?? ""] : "sha1";
  let hash: "sha1" | "sha256" | "sha384" | "sha512" | undefined;
  if (alg === "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p") {
    hash = digest === "sha1" ? "sha1" : undefined; // MGF1 is SHA-1 here: only a SHA-1 digest matches what node:crypto offers
  } else if (alg === "http://www.w3.org/2009/xmlenc11#rsa-oaep") {
    const mgfEl = optionalChild(method, NS.xenc11, "MGF");
    const mgf = mgfEl ? MGF1[attr(mgfEl, "Algorithm") ?? ""] : "sha1";
    hash = digest !== undefined && digest === mgf ? digest : undefined;
  }
  if (!hash) throw new SamlError("SAML_DECRYPTION_FAILED", `key transport ${alg ?? "(none)"} is not accepted (RSA-OAEP only)`);
  return rsaOaepUnwrap(privateKeyPem, cipherValue(encryptedKey), hash);
}

export function decryptAssertion(encryptedAssertion: Element, privateKeyPem: string | undefined): string {
  if (!privateKeyPem) throw new SamlError("SAML_DECRYPTION_FAILED", "an encrypted assertion arrived but no decryption key is configured");
  const data = requiredChild(encryptedAssertion, NS.xenc, "EncryptedData");
  const alg = attr(requiredChild(data, NS.xenc, "EncryptionMethod"), "Algorithm") ?? "";
  const cipher = BLOCK[alg];
  if (!cipher) throw new SamlError("SAML_DECRYPTION_FAILED", `content encryption ${alg} is not accepted`);
  // The wrapped key sits in EncryptedData/KeyInfo (SimpleSAMLphp, Shibboleth) or beside EncryptedData (ADFS, Okta).
  const keyInfo = optionalChild(data, NS.ds, "KeyInfo");
  const keys = [...(keyInfo ? children(keyInfo, NS.xenc, "EncryptedKey") : []), ...children(encryptedAssertion, NS.xenc, "EncryptedKey")];
  if (keys.length === 0) throw new SamlError("SAML_DECRYPTION_FAILED", "no EncryptedKey");
  for (const c of children(encryptedAssertion)) {
    if (!(is(c, NS.xenc, "EncryptedData") || is(c, NS.xenc, "EncryptedKey"))) throw new SamlError("SAML_MALFORMED", `unexpected ${c.localName} in EncryptedAssertion`);
  }
  let lastError: unknown;
  for (const encryptedKey of keys) {
    try {
      const key = unwrapKey(encryptedKey, privateKeyPem);
      return xmlEncDecrypt(cipher, key, cipherValue(data)).toString("utf8");
    } catch (e) {
      lastError = e;
    }
  }
  // One message for every failure after the algorithm checks: no padding or key oracle.
  if (lastError instanceof SamlError && lastError.message.includes("not accepted")) throw lastError;
  throw new SamlError("SAML_DECRYPTION_FAILED", "the encrypted assertion could not be decrypted");
}
