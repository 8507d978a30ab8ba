import { deflateRawSync } from "node:zlib";
import { privateKeyType, randomHex, signXmlDsig } from "../crypto/index.js";
import { SamlError } from "./errors.js";
import { BINDINGS, type SamlBinding } from "./metadata.js";
import { SIG_ALG, signMessage } from "./signature.js";
import { NS, escapeXml } from "./xml.js";

export interface AuthnRequestOptions {
  spEntityId: string;
  acsUrl: string;
  idpSsoUrl: string;
  binding: SamlBinding;
  /** Signs the request (query signature for redirect, enveloped XML signature for POST). */
  signingKeyPem?: string;
  /** An opaque handle of at most 80 bytes (SAML bindings §3.4.3): the SSO module's state id, never a URL. */
  relayState: string;
  forceAuthn?: boolean;
  nameIdFormat?: string;
  now?: Date;
}

export type AuthnRequest =
  | { id: string; binding: "redirect"; url: string }
  | { id: string; binding: "post"; url: string; fields: { SAMLRequest: string; RelayState: string } };

/** A fresh SAML message ID: starts with a letter (xs:ID), 160 random bits. */
export const newMessageId = (): string => `_${randomHex(20)}`;

/**
 * Builds an AuthnRequest. Keep `id` with the RelayState's state: validateResponse's
 * `expectedRequestIds` is how the answer is tied to this browser's request.
 */
export function buildAuthnRequest(o: AuthnRequestOptions): AuthnRequest {
  if (Buffer.byteLength(o.relayState) > 80) throw new SamlError("SAML_CONFIG", "RelayState is at most 80 bytes");
  const id = newMessageId();
  const xml =
    `<samlp:AuthnRequest xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${id}" Version="2.0"` +
    ` IssueInstant="${(o.now ?? new Date()).toISOString()}" Destination="${escapeXml(o.idpSsoUrl)}"` +
    ` AssertionConsumerServiceURL="${escapeXml(o.acsUrl)}" ProtocolBinding="${BINDINGS.post}"${o.forceAuthn ? ' ForceAuthn="true"' : ""}>` +
    `<saml:Issuer>${escapeXml(o.spEntityId)}</saml:Issuer>` +
    `<samlp:NameIDPolicy AllowCreate="true"${o.nameIdFormat ? ` Format="${escapeXml(o.nameIdFormat)}"` : ""}/>` +
    `</samlp:AuthnRequest>`;
  const sigAlg = o.signingKeyPem ? (privateKeyType(o.signingKeyPem) === "ec" ? SIG_ALG.ecdsaSha256 : SIG_ALG.rsaSha256) : undefined;
  if (o.binding === "post") {
    const signed = o.signingKeyPem ? signMessage(xml, id, o.signingKeyPem, sigAlg!) : xml;
    return { id, binding: "post", url: o.idpSsoUrl, fields: { SAMLRequest: Buffer.from(signed).toString("base64"), RelayState: o.relayState } };
  }
  // HTTP-Redirect: the query itself is signed, in this exact order (bindings §3.4.4.1).
  let query = `SAMLRequest=${encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString("base64"))}&RelayState=${encodeURIComponent(o.relayState)}`;
  if (o.signingKeyPem) {
    query += `&SigAlg=${encodeURIComponent(sigAlg!)}`;
    query += `&Signature=${encodeURIComponent(signXmlDsig("sha256", o.signingKeyPem, query))}`;
  }
  return { id, binding: "redirect", url: `${o.idpSsoUrl}${o.idpSsoUrl.includes("?") ? "&" : "?"}${query}` };
}
