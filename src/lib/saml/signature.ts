import { createRequire } from "node:module";
import type { HashAlgorithm, SignatureAlgorithm, SignedXml } from "xml-crypto";
import { signXmlDsig, verifyXmlDsig, xmlDigest, type XmlDsigHash, type XmlDsigKeyType } from "../crypto/index.js";
import { SamlError } from "./errors.js";
import { NS, attr, children, optionalChild, requiredChild, text } from "./xml.js";

/**
 * XML-DSig verification with xml-crypto, narrowed to what SAML needs. Before xml-crypto sees a
 * signature, its shape is checked here: one SignedInfo, one Reference whose URI is "#" + the ID of
 * the element the signature sits in, only the allowed transforms, canonicalizations, digests and
 * signature algorithms (no SHA-1, no HMAC, no #WithComments). xml-crypto's own algorithm tables
 * are replaced by those allow-lists too, and KeyInfo is never read: only the pinned certificates.
 * What comes back is the canonical XML that the digest covered, which the caller parses again and
 * reads from: the very bytes whose signature verified, not a node of the received document.
 */

const ALG = {
  rsaSha256: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
  rsaSha384: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
  rsaSha512: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
  ecdsaSha256: "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
  ecdsaSha384: "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384",
  ecdsaSha512: "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512",
} as const;

const SIGNATURE_ALGORITHMS: Record<string, [XmlDsigKeyType, XmlDsigHash]> = {
  [ALG.rsaSha256]: ["rsa", "sha256"],
  [ALG.rsaSha384]: ["rsa", "sha384"],
  [ALG.rsaSha512]: ["rsa", "sha512"],
  [ALG.ecdsaSha256]: ["ec", "sha256"],
  [ALG.ecdsaSha384]: ["ec", "sha384"],
  [ALG.ecdsaSha512]: ["ec", "sha512"],
};

const DIGESTS: Record<string, XmlDsigHash> = {
  "http://www.w3.org/2001/04/xmlenc#sha256": "sha256",
  "http://www.w3.org/2001/04/xmldsig-more#sha384": "sha384",
  "http://www.w3.org/2001/04/xmlenc#sha512": "sha512",
};

export const EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#";
const C14N = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315";
const ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";
const CANONICALIZATIONS = new Set([EXC_C14N, C14N]);
const TRANSFORMS = new Set([ENVELOPED, EXC_C14N, C14N]);

/** The [key type, hash] of an allowed signature algorithm; anything else (SHA-1, HMAC, …) is refused. */
export function signatureAlgorithmOf(uri: string): [XmlDsigKeyType, XmlDsigHash] {
  const found = SIGNATURE_ALGORITHMS[uri];
  if (!found) throw new SamlError("SAML_ALGORITHM_FORBIDDEN", `signature algorithm ${uri} is not allowed`);
  return found;
}

/** Allowed algorithm identifiers, for the README and the tests. */
export const ALLOWED_ALGORITHMS = { signature: Object.keys(SIGNATURE_ALGORITHMS), digest: Object.keys(DIGESTS), canonicalization: [...CANONICALIZATIONS] };

function signatureAlgorithmClass(uri: string): new () => SignatureAlgorithm {
  const [kind, hash] = SIGNATURE_ALGORITHMS[uri]!;
  return class implements SignatureAlgorithm {
    getSignature(signedInfo: unknown, privateKey: unknown): string {
      return signXmlDsig(hash, String(privateKey), String(signedInfo));
    }
    verifySignature(material: string, key: unknown, signatureValue: string): boolean {
      try {
        return verifyXmlDsig(kind, hash, String(key), material, signatureValue);
      } catch {
        return false;
      }
    }
    getAlgorithmName(): string {
      return uri;
    }
  } as new () => SignatureAlgorithm;
}

function digestClass(uri: string): new () => HashAlgorithm {
  const hash = DIGESTS[uri]!;
  return class implements HashAlgorithm {
    getHash(xml: string): string {
      return xmlDigest(hash, xml);
    }
    getAlgorithmName(): string {
      return uri;
    }
  };
}

/**
 * xml-crypto (with xpath and @xmldom/xmldom, about 2.5 MB of heap) loads with the first signature
 * checked or made: an instance whose organizations use no SAML connection never holds it.
 */
let library: typeof import("xml-crypto") | undefined;
let envelopedSignature: unknown;
function xmlCrypto(): typeof import("xml-crypto") {
  if (!library) {
    library = createRequire(import.meta.url)("xml-crypto") as typeof import("xml-crypto");
    // xml-crypto's enveloped-signature transform (not exported by name).
    envelopedSignature = new library.SignedXml().CanonicalizationAlgorithms[ENVELOPED];
  }
  return library;
}

/** A SignedXml that knows only the allowed algorithms and never takes a key from the document. */
function restrictedSignedXml(): SignedXml {
  const { SignedXml, ExclusiveCanonicalization, C14nCanonicalization } = xmlCrypto();
  const sig = new SignedXml({ getCertFromKeyInfo: () => null, getKeyInfoContent: () => null });
  sig.idAttributes = ["ID"];
  sig.SignatureAlgorithms = Object.fromEntries(Object.keys(SIGNATURE_ALGORITHMS).map((uri) => [uri, signatureAlgorithmClass(uri)]));
  sig.HashAlgorithms = Object.fromEntries(Object.keys(DIGESTS).map((uri) => [uri, digestClass(uri)]));
  sig.CanonicalizationAlgorithms = {
    [EXC_C14N]: ExclusiveCanonicalization,
    [C14N]: C14nCanonicalization,
    [ENVELOPED]: envelopedSignature as (typeof sig.CanonicalizationAlgorithms)[string],
  };
  return sig;
}

/** The ds:Signature children of an element (a SAML Response or Assertion carries at most one). */
export function signatureOf(el: Element): Element | undefined {
  const found = children(el, NS.ds, "Signature");
  if (found.length > 1) throw new SamlError("SAML_SIGNATURE_SHAPE", `${el.localName} carries more than one Signature`);
  return found[0];
}

/** Refuses a signature whose shape or algorithms are outside the allow-lists, before any crypto. */
function checkShape(signature: Element, signedId: string): void {
  const signedInfo = requiredChild(signature, NS.ds, "SignedInfo");
  if (children(signature, NS.ds, "SignedInfo").length !== 1) throw new SamlError("SAML_SIGNATURE_SHAPE", "more than one SignedInfo");
  const c14n = attr(requiredChild(signedInfo, NS.ds, "CanonicalizationMethod"), "Algorithm") ?? "";
  if (!CANONICALIZATIONS.has(c14n)) throw new SamlError("SAML_ALGORITHM_FORBIDDEN", `canonicalization ${c14n} is not allowed`);
  const method = attr(requiredChild(signedInfo, NS.ds, "SignatureMethod"), "Algorithm") ?? "";
  if (!(method in SIGNATURE_ALGORITHMS)) throw new SamlError("SAML_ALGORITHM_FORBIDDEN", `signature algorithm ${method} is not allowed`);
  const references = children(signedInfo, NS.ds, "Reference");
  if (references.length !== 1) throw new SamlError("SAML_SIGNATURE_SHAPE", `a SAML signature has exactly one Reference, not ${references.length}`);
  const reference = references[0]!;
  if (attr(reference, "URI") !== `#${signedId}`) throw new SamlError("SAML_SIGNATURE_SHAPE", "the signature does not reference the element it is in");
  const transforms = optionalChild(reference, NS.ds, "Transforms");
  for (const t of transforms ? children(transforms) : []) {
    const alg = attr(t, "Algorithm") ?? "";
    if (!(t.namespaceURI === NS.ds && t.localName === "Transform" && TRANSFORMS.has(alg))) throw new SamlError("SAML_ALGORITHM_FORBIDDEN", `transform ${alg} is not allowed`);
  }
  const digest = attr(requiredChild(reference, NS.ds, "DigestMethod"), "Algorithm") ?? "";
  if (!(digest in DIGESTS)) throw new SamlError("SAML_ALGORITHM_FORBIDDEN", `digest ${digest} is not allowed`);
  text(requiredChild(reference, NS.ds, "DigestValue"));
  text(requiredChild(signature, NS.ds, "SignatureValue"));
}

/**
 * Verifies the signature that `signed` (an element of the document parsed from `xml`) carries,
 * against each pinned certificate in turn. Returns the canonical XML of `signed` that the
 * signature covers; throws a SamlError otherwise.
 */
export function verifySignedElement(xml: string, signed: Element, certsPem: readonly string[]): string {
  if (certsPem.length === 0) throw new SamlError("SAML_NO_IDP_CERT", "no IdP certificate is pinned: nothing can be trusted");
  const signature = signatureOf(signed);
  if (!signature) throw new SamlError("SAML_SIGNATURE_MISSING", `${signed.localName} is not signed`);
  const id = attr(signed, "ID");
  if (!id) throw new SamlError("SAML_MALFORMED", `${signed.localName} has no ID`);
  checkShape(signature, id);
  for (const cert of certsPem) {
    const sig = restrictedSignedXml();
    sig.publicCert = cert;
    try {
      sig.loadSignature(signature);
      if (sig.checkSignature(xml) !== true) continue;
    } catch {
      continue;
    }
    const refs = sig.getSignedReferences();
    if (refs.length !== 1) throw new SamlError("SAML_SIGNATURE_SHAPE", "a SAML signature covers exactly one element");
    return refs[0]!;
  }
  throw new SamlError("SAML_SIGNATURE_INVALID", `the ${signed.localName} signature does not verify with a pinned IdP certificate`);
}

/** Signs `xml` (a SAML message whose root has `ID`), enveloped, exc-c14n, RSA/ECDSA-SHA256, inserting the Signature after the Issuer. */
export function signMessage(xml: string, id: string, privateKeyPem: string, signatureAlgorithm: string): string {
  const sig = restrictedSignedXml();
  sig.privateKey = privateKeyPem;
  sig.signatureAlgorithm = signatureAlgorithm;
  sig.canonicalizationAlgorithm = EXC_C14N;
  sig.addReference({ xpath: `/*[@ID='${id}']`, transforms: [ENVELOPED, EXC_C14N], digestAlgorithm: "http://www.w3.org/2001/04/xmlenc#sha256" });
  sig.computeSignature(xml, { prefix: "ds", location: { reference: `/*/*[local-name()='Issuer']`, action: "after" } });
  return sig.getSignedXml();
}

export const SIG_ALG = ALG;
