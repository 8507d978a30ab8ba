import { createRequire } from "node:module";

/** @xmldom/xmldom loads with the first SAML message parsed or serialised, not with the service. */
let xmldom: typeof import("@xmldom/xmldom") | undefined;
const dom = () => (xmldom ??= createRequire(import.meta.url)("@xmldom/xmldom") as typeof import("@xmldom/xmldom"));
import { SamlError } from "./errors.js";

/** Namespaces of SAML 2.0, XML-DSig and XML-Enc. */
export const NS = {
  protocol: "urn:oasis:names:tc:SAML:2.0:protocol",
  assertion: "urn:oasis:names:tc:SAML:2.0:assertion",
  metadata: "urn:oasis:names:tc:SAML:2.0:metadata",
  ds: "http://www.w3.org/2000/09/xmldsig#",
  xenc: "http://www.w3.org/2001/04/xmlenc#",
  xenc11: "http://www.w3.org/2009/xmlenc11#",
} as const;

export interface ParseLimits {
  maxBytes: number;
  maxDepth: number;
  maxNodes: number;
  /** Metadata files carry comments; messages never do (and comment injection is an attack). */
  allowComments?: boolean;
}

export const MESSAGE_LIMITS: ParseLimits = { maxBytes: 256 * 1024, maxDepth: 48, maxNodes: 20_000 };

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;
const CDATA_SECTION_NODE = 4;
const PROCESSING_INSTRUCTION_NODE = 7;
const COMMENT_NODE = 8;
const DOCUMENT_TYPE_NODE = 10;

/**
 * The one XML parser of the SAML adapter (the same @xmldom/xmldom that xml-crypto verifies with, so
 * the tree that is checked and the tree that is read come from one parser). Hardened: a size limit
 * before parsing; any DOCTYPE or ENTITY declaration refused before the parser sees it (no DTD, no
 * entity expansion, no external fetch); every parser warning is an error; after parsing, depth and
 * node-count limits, and no comment, processing instruction or doctype node anywhere.
 */
export function parseXml(xml: string, limits: ParseLimits = MESSAGE_LIMITS): Document {
  if (Buffer.byteLength(xml, "utf8") > limits.maxBytes) throw new SamlError("SAML_TOO_LARGE", `XML above ${limits.maxBytes} bytes`);
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new SamlError("SAML_DTD_FORBIDDEN", "a DOCTYPE or ENTITY declaration is not accepted");
  const problems: string[] = [];
  const record = (msg: unknown): void => void problems.push(String(msg));
  const doc = new (dom().DOMParser)({ errorHandler: { warning: record, error: record, fatalError: record } }).parseFromString(xml, "text/xml");
  if (problems.length > 0 || !doc?.documentElement) throw new SamlError("SAML_MALFORMED", `not well-formed XML: ${problems[0] ?? "no root element"}`);
  let nodes = 0;
  const walk = (node: Node, depth: number): void => {
    if (depth > limits.maxDepth) throw new SamlError("SAML_TOO_LARGE", `XML nested deeper than ${limits.maxDepth}`);
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (++nodes > limits.maxNodes) throw new SamlError("SAML_TOO_LARGE", `XML with more than ${limits.maxNodes} nodes`);
      // The XML declaration (`<?xml …?>`) is the only processing instruction, and only before the root.
      const declaration = child.nodeType === PROCESSING_INSTRUCTION_NODE && node === doc && (child as ProcessingInstruction).target === "xml";
      if ((child.nodeType === COMMENT_NODE && !limits.allowComments) || (child.nodeType === PROCESSING_INSTRUCTION_NODE && !declaration)) {
        throw new SamlError("SAML_FORBIDDEN_NODE", "comments and processing instructions are not accepted in SAML messages");
      }
      if (child.nodeType === DOCUMENT_TYPE_NODE) throw new SamlError("SAML_DTD_FORBIDDEN", "a DOCTYPE is not accepted");
      if (child.nodeType === ELEMENT_NODE) walk(child, depth + 1);
    }
  };
  walk(doc, 0);
  return doc;
}

export const isElement = (n: Node | null | undefined): n is Element => n?.nodeType === ELEMENT_NODE;

export const is = (el: Element, ns: string, localName: string): boolean => el.namespaceURI === ns && el.localName === localName;

/** The element children of `el` (optionally only those named ns:localName). */
export function children(el: Element, ns?: string, localName?: string): Element[] {
  const out: Element[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) if (isElement(c) && (ns === undefined || is(c, ns, localName!))) out.push(c);
  return out;
}

/** At most one child named ns:localName; two is malformed (a second Issuer, Subject, … is a wrapping smell). */
export function optionalChild(el: Element, ns: string, localName: string): Element | undefined {
  const found = children(el, ns, localName);
  if (found.length > 1) throw new SamlError("SAML_MALFORMED", `more than one ${localName} in ${el.localName}`);
  return found[0];
}

export function requiredChild(el: Element, ns: string, localName: string): Element {
  const found = optionalChild(el, ns, localName);
  if (!found) throw new SamlError("SAML_MALFORMED", `${el.localName} has no ${localName}`);
  return found;
}

/** Every element below (and including) `root` named ns:localName. */
export function descendants(root: Node, ns: string, localName: string): Element[] {
  const out: Element[] = [];
  const walk = (n: Node): void => {
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (!isElement(c)) continue;
      if (is(c, ns, localName)) out.push(c);
      walk(c);
    }
  };
  if (isElement(root) && is(root, ns, localName)) out.push(root);
  walk(root);
  return out;
}

export function allElements(root: Node): Element[] {
  const out: Element[] = [];
  const walk = (n: Node): void => {
    for (let c = n.firstChild; c; c = c.nextSibling) if (isElement(c)) (out.push(c), walk(c));
  };
  walk(root);
  return out;
}

/**
 * The text of a leaf element: all its text (and CDATA) children joined, and nothing else. An element
 * child is malformed here (text split by markup is how comment/element injection truncates a NameID).
 */
export function text(el: Element): string {
  let out = "";
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === TEXT_NODE || c.nodeType === CDATA_SECTION_NODE) out += c.nodeValue ?? "";
    else throw new SamlError("SAML_MALFORMED", `${el.localName} must hold text only`);
  }
  return out.trim();
}

export const attr = (el: Element, name: string): string | undefined => (el.hasAttribute(name) ? el.getAttribute(name)! : undefined);

export const serialize = (node: Node): string => new (dom().XMLSerializer)().serializeToString(node);

export function escapeXml(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

/** A certificate as PEM, from PEM or from the bare base64 of metadata's X509Certificate. */
export function certToPem(cert: string): string {
  const body = cert.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body)) throw new SamlError("SAML_MALFORMED", "a certificate is not base64");
  return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`;
}

export const certBody = (pem: string): string => certToPem(pem).replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
