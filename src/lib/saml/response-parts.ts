import { SamlError } from "./errors.js";
import { MESSAGE_LIMITS, NS, allElements, attr, children, descendants, is, optionalChild, parseXml, text } from "./xml.js";

/** The small readers validateResponse is built from: decoding, times, ids, signature placement, issuer, attribute values. */
const MAX_BASE64 = Math.ceil((MESSAGE_LIMITS.maxBytes * 4) / 3) + 4096;

export function decodeMessage(b64: string): string {
  if (typeof b64 !== "string" || b64.length === 0) throw new SamlError("SAML_MALFORMED", "no SAMLResponse");
  if (b64.length > MAX_BASE64) throw new SamlError("SAML_TOO_LARGE", "SAMLResponse above the size limit");
  const clean = b64.replace(/[\r\n\t ]+/g, "");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(clean)) throw new SamlError("SAML_MALFORMED", "SAMLResponse is not base64");
  return Buffer.from(clean, "base64").toString("utf8");
}

const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

export function time(el: Element, name: string): number | undefined {
  const value = attr(el, name);
  if (value === undefined) return undefined;
  const ms = DATE_TIME.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw new SamlError("SAML_MALFORMED", `${el.localName}@${name} is not a dateTime`);
  return ms;
}

/** No two elements share an ID (in any of the spellings xml-crypto looks up): the precondition of every wrapping attack. */
export function requireUniqueIds(doc: Node): void {
  const seen = new Set<string>();
  for (const el of allElements(doc)) {
    for (let i = 0; i < el.attributes.length; i++) {
      const a = el.attributes.item(i)!;
      if (a.localName !== "ID" && a.localName !== "Id" && a.localName !== "id") continue;
      if (seen.has(a.value)) throw new SamlError("SAML_DUPLICATE_ID", `ID ${a.value} appears twice`);
      seen.add(a.value);
    }
  }
}

/** Signatures only where SAML puts them: as a child of the Response or of the Assertion. */
export function requireSignaturesIn(doc: Node, allowedParents: readonly Node[]): void {
  for (const s of descendants(doc, NS.ds, "Signature")) {
    if (!allowedParents.includes(s.parentNode!)) throw new SamlError("SAML_SIGNATURE_SHAPE", `a Signature inside ${s.parentNode?.nodeName ?? "?"}`);
  }
}

export function reparse(canonicalXml: string, ns: string, localName: string, id: string): Element {
  const el = parseXml(canonicalXml).documentElement;
  if (!is(el, ns, localName) || attr(el, "ID") !== id) throw new SamlError("SAML_SIGNATURE_SHAPE", "the signed bytes are not the element the signature sits in");
  return el;
}

export function requireIssuer(el: Element, idpEntityId: string, required: boolean): string | undefined {
  const issuer = optionalChild(el, NS.assertion, "Issuer");
  if (!issuer) {
    if (required) throw new SamlError("SAML_ISSUER_MISMATCH", `${el.localName} has no Issuer`);
    return undefined;
  }
  const format = attr(issuer, "Format");
  if (format !== undefined && format !== "urn:oasis:names:tc:SAML:2.0:nameid-format:entity") throw new SamlError("SAML_ISSUER_MISMATCH", "Issuer is not an entity");
  const value = text(issuer);
  if (value !== idpEntityId) throw new SamlError("SAML_ISSUER_MISMATCH", `${el.localName} issued by ${value}, not ${idpEntityId}`);
  return value;
}

export function attributeValue(el: Element): string | undefined {
  if (children(el).length > 0) return undefined; // a structured value (e.g. a NameID): not a string attribute
  return text(el);
}
