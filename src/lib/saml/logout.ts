import { inflateRawSync, deflateRawSync } from "node:zlib";
import { privateKeyType, signXmlDsig, verifyXmlDsig } from "../crypto/index.js";
import { newMessageId } from "./authn-request.js";
import { SamlError } from "./errors.js";
import { SIG_ALG, signatureAlgorithmOf } from "./signature.js";
import { MESSAGE_LIMITS, NS, attr, certToPem, children, escapeXml, is, optionalChild, parseXml, requiredChild, text } from "./xml.js";

/**
 * Single logout over the HTTP-Redirect binding (the binding every IdP offers for SLO). Messages from
 * the IdP must carry a query signature (SigAlg + Signature) by a pinned certificate: an unsigned
 * LogoutRequest would let anyone end anyone's sessions. Parsed with the same hardened parser.
 */

const SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success";

export interface LogoutRequestOptions {
  spEntityId: string;
  idpSloUrl: string;
  nameId: string;
  nameIdFormat?: string;
  sessionIndex?: string;
  signingKeyPem?: string;
  relayState?: string;
  now?: Date;
}

function redirectUrl(endpoint: string, param: "SAMLRequest" | "SAMLResponse", xml: string, relayState: string | undefined, signingKeyPem: string | undefined): string {
  let query = `${param}=${encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString("base64"))}`;
  if (relayState !== undefined) query += `&RelayState=${encodeURIComponent(relayState)}`;
  if (signingKeyPem) {
    const alg = privateKeyType(signingKeyPem) === "ec" ? SIG_ALG.ecdsaSha256 : SIG_ALG.rsaSha256;
    query += `&SigAlg=${encodeURIComponent(alg)}`;
    query += `&Signature=${encodeURIComponent(signXmlDsig("sha256", signingKeyPem, query))}`;
  }
  return `${endpoint}${endpoint.includes("?") ? "&" : "?"}${query}`;
}

/** An SP-initiated LogoutRequest (keep `id`: the LogoutResponse must answer it). */
export function buildLogoutRequest(o: LogoutRequestOptions): { id: string; url: string } {
  const id = newMessageId();
  const xml =
    `<samlp:LogoutRequest xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${id}" Version="2.0" IssueInstant="${(o.now ?? new Date()).toISOString()}" Destination="${escapeXml(o.idpSloUrl)}">` +
    `<saml:Issuer>${escapeXml(o.spEntityId)}</saml:Issuer>` +
    `<saml:NameID${o.nameIdFormat ? ` Format="${escapeXml(o.nameIdFormat)}"` : ""}>${escapeXml(o.nameId)}</saml:NameID>` +
    (o.sessionIndex ? `<samlp:SessionIndex>${escapeXml(o.sessionIndex)}</samlp:SessionIndex>` : "") +
    `</samlp:LogoutRequest>`;
  return { id, url: redirectUrl(o.idpSloUrl, "SAMLRequest", xml, o.relayState, o.signingKeyPem) };
}

/** The SP's answer to an IdP-initiated LogoutRequest. */
export function buildLogoutResponse(o: { spEntityId: string; idpSloUrl: string; inResponseTo: string; signingKeyPem?: string; relayState?: string; now?: Date }): string {
  const xml =
    `<samlp:LogoutResponse xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${newMessageId()}" Version="2.0" IssueInstant="${(o.now ?? new Date()).toISOString()}" Destination="${escapeXml(o.idpSloUrl)}" InResponseTo="${escapeXml(o.inResponseTo)}">` +
    `<saml:Issuer>${escapeXml(o.spEntityId)}</saml:Issuer><samlp:Status><samlp:StatusCode Value="${SUCCESS}"/></samlp:Status></samlp:LogoutResponse>`;
  return redirectUrl(o.idpSloUrl, "SAMLResponse", xml, o.relayState, o.signingKeyPem);
}

export interface RedirectMessageOptions {
  idpEntityId: string;
  idpCertsPem: readonly string[];
  /** This SP's SingleLogoutService URL: the message's Destination must equal it. */
  sloUrl: string;
  now: Date;
  clockSkewSeconds: number;
}

/** Reads a signed HTTP-Redirect message from the raw query string exactly as it arrived (the signature covers its encoded bytes). */
function readRedirect(rawQuery: string, param: "SAMLRequest" | "SAMLResponse", opts: RedirectMessageOptions): Element {
  if (opts.idpCertsPem.length === 0) throw new SamlError("SAML_NO_IDP_CERT", "no IdP certificate is pinned: nothing can be trusted");
  if (rawQuery.length > MESSAGE_LIMITS.maxBytes) throw new SamlError("SAML_TOO_LARGE", "query above the size limit");
  const raw = new Map<string, string>();
  for (const part of rawQuery.replace(/^\?/, "").split("&")) {
    const eq = part.indexOf("=");
    const key = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    if (raw.has(key)) throw new SamlError("SAML_MALFORMED", `${key} appears twice`);
    raw.set(key, eq < 0 ? "" : part.slice(eq + 1));
  }
  const message = raw.get(param);
  const sigAlg = raw.get("SigAlg");
  const signature = raw.get("Signature");
  if (message === undefined) throw new SamlError("SAML_MALFORMED", `no ${param}`);
  if (sigAlg === undefined || signature === undefined) throw new SamlError("SAML_SIGNATURE_MISSING", "a logout message must be signed");
  const algorithm = signatureAlgorithmOf(decodeURIComponent(sigAlg));
  const signed = [`${param}=${message}`, ...(raw.has("RelayState") ? [`RelayState=${raw.get("RelayState")}`] : []), `SigAlg=${sigAlg}`].join("&");
  const sig = decodeURIComponent(signature);
  const verified = opts.idpCertsPem.some((c) => {
    try {
      return verifyXmlDsig(algorithm[0], algorithm[1], certToPem(c), signed, sig);
    } catch {
      return false;
    }
  });
  if (!verified) throw new SamlError("SAML_SIGNATURE_INVALID", "the logout message's signature does not verify with a pinned IdP certificate");
  let xml: string;
  try {
    xml = inflateRawSync(Buffer.from(decodeURIComponent(message), "base64"), { maxOutputLength: MESSAGE_LIMITS.maxBytes }).toString("utf8");
  } catch {
    throw new SamlError("SAML_MALFORMED", `${param} does not inflate (or is above the size limit)`);
  }
  const root: Element = parseXml(xml).documentElement;
  if (attr(root, "Version") !== "2.0") throw new SamlError("SAML_MALFORMED", "not SAML 2.0");
  const issuer = optionalChild(root, NS.assertion, "Issuer");
  if (!issuer || text(issuer) !== opts.idpEntityId) throw new SamlError("SAML_ISSUER_MISMATCH", "the logout message is not from this IdP");
  if (attr(root, "Destination") !== opts.sloUrl) throw new SamlError("SAML_DESTINATION_MISMATCH", "the logout message is for another endpoint");
  return root;
}

/** Validates the IdP's LogoutResponse (HTTP-Redirect) to one of our LogoutRequests. */
export function validateLogoutResponse(rawQuery: string, opts: RedirectMessageOptions & { expectedRequestIds: readonly string[] }): { inResponseTo: string; success: boolean } {
  const root = readRedirect(rawQuery, "SAMLResponse", opts);
  if (!is(root, NS.protocol, "LogoutResponse")) throw new SamlError("SAML_MALFORMED", "not a LogoutResponse");
  const inResponseTo = attr(root, "InResponseTo");
  if (!inResponseTo || !opts.expectedRequestIds.includes(inResponseTo)) throw new SamlError("SAML_IN_RESPONSE_TO", "not an answer to our logout request");
  const success = attr(requiredChild(requiredChild(root, NS.protocol, "Status"), NS.protocol, "StatusCode"), "Value") === SUCCESS;
  return { inResponseTo, success };
}

/** Validates an IdP-initiated LogoutRequest (HTTP-Redirect): whose sessions to end. */
export function validateLogoutRequest(rawQuery: string, opts: RedirectMessageOptions): { id: string; nameId: string; sessionIndexes: string[] } {
  const root = readRedirect(rawQuery, "SAMLRequest", opts);
  if (!is(root, NS.protocol, "LogoutRequest")) throw new SamlError("SAML_MALFORMED", "not a LogoutRequest");
  const id = attr(root, "ID");
  if (!id) throw new SamlError("SAML_MALFORMED", "a LogoutRequest without ID");
  const notOnOrAfter = attr(root, "NotOnOrAfter");
  if (notOnOrAfter !== undefined && opts.now.getTime() >= Date.parse(notOnOrAfter) + opts.clockSkewSeconds * 1000) throw new SamlError("SAML_EXPIRED", "the logout request has expired");
  const nameId = text(requiredChild(root, NS.assertion, "NameID"));
  return { id, nameId, sessionIndexes: children(root, NS.protocol, "SessionIndex").map(text) };
}
