import { SamlError } from "./errors.js";
import { NS, attr, certBody, certToPem, children, descendants, escapeXml, parseXml, text } from "./xml.js";

export const BINDINGS = {
  redirect: "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect",
  post: "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST",
} as const;

export type SamlBinding = keyof typeof BINDINGS;

export interface SpMetadataOptions {
  entityId: string;
  acsUrl: string;
  sloUrl?: string;
  /** Published when AuthnRequests are signed (the IdP verifies them with it). */
  signingCertPem?: string;
  /** Published so the IdP encrypts assertions to the SP; the matching key is `decryptionKeyPem`. */
  encryptionCertPem?: string;
  /** Always true: Keyward never accepts an assertion that is not signed. */
  wantAssertionsSigned: true;
  authnRequestsSigned: boolean;
  /** The NameID format asked for (e.g. emailAddress or persistent); none by default. */
  nameIdFormat?: string;
}

const keyDescriptor = (use: "signing" | "encryption", pem: string): string =>
  `<md:KeyDescriptor use="${use}"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certBody(pem)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;

/** The SP metadata an admin gives the IdP (one per connection). */
export function spMetadata(o: SpMetadataOptions): string {
  if (o.authnRequestsSigned && !o.signingCertPem) throw new SamlError("SAML_CONFIG", "signed AuthnRequests need a signing certificate");
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<md:EntityDescriptor xmlns:md="${NS.metadata}" xmlns:ds="${NS.ds}" entityID="${escapeXml(o.entityId)}">`,
    `<md:SPSSODescriptor AuthnRequestsSigned="${o.authnRequestsSigned}" WantAssertionsSigned="true" protocolSupportEnumeration="${NS.protocol}">`,
    o.signingCertPem ? keyDescriptor("signing", o.signingCertPem) : "",
    o.encryptionCertPem ? keyDescriptor("encryption", o.encryptionCertPem) : "",
    o.sloUrl ? `<md:SingleLogoutService Binding="${BINDINGS.redirect}" Location="${escapeXml(o.sloUrl)}"/>` : "",
    o.nameIdFormat ? `<md:NameIDFormat>${escapeXml(o.nameIdFormat)}</md:NameIDFormat>` : "",
    `<md:AssertionConsumerService Binding="${BINDINGS.post}" Location="${escapeXml(o.acsUrl)}" index="0" isDefault="true"/>`,
    `</md:SPSSODescriptor>`,
    `</md:EntityDescriptor>`,
  ].join("\n");
}

export interface IdpMetadata {
  entityId: string;
  ssoUrls: Partial<Record<SamlBinding, string>>;
  sloUrl?: string;
  sloBinding?: SamlBinding;
  /** Every signing certificate listed (several during a rollover): all are pinned. */
  signingCertsPem: string[];
  /** The IdP wants signed AuthnRequests. */
  wantAuthnRequestsSigned: boolean;
}

/** Metadata is bigger than a message, but one entity's stays well below this. */
export const METADATA_LIMITS = { maxBytes: 512 * 1024, maxDepth: 32, maxNodes: 20_000, allowComments: true };

/**
 * Reads an IdP's metadata (from its URL or a file an admin uploads), with the same hardened parser as
 * messages. An EntitiesDescriptor is accepted when it holds exactly one IdP.
 */
export function parseIdpMetadata(xml: string): IdpMetadata {
  const doc = parseXml(xml, METADATA_LIMITS);
  const entities = descendants(doc, NS.metadata, "EntityDescriptor").filter((e) => children(e, NS.metadata, "IDPSSODescriptor").length > 0);
  if (entities.length !== 1) throw new SamlError("SAML_MALFORMED", `the metadata describes ${entities.length} identity providers, not one`);
  const entity = entities[0]!;
  const entityId = attr(entity, "entityID");
  if (!entityId) throw new SamlError("SAML_MALFORMED", "the metadata has no entityID");
  const idp = children(entity, NS.metadata, "IDPSSODescriptor").find((d) => (attr(d, "protocolSupportEnumeration") ?? "").split(/\s+/).includes(NS.protocol));
  if (!idp) throw new SamlError("SAML_MALFORMED", "the IdP does not support SAML 2.0");
  const bindingOf = (uri: string | undefined): SamlBinding | undefined => (Object.keys(BINDINGS) as SamlBinding[]).find((b) => BINDINGS[b] === uri);
  const ssoUrls: Partial<Record<SamlBinding, string>> = {};
  for (const s of children(idp, NS.metadata, "SingleSignOnService")) {
    const binding = bindingOf(attr(s, "Binding"));
    const location = attr(s, "Location");
    if (binding && location && !ssoUrls[binding]) ssoUrls[binding] = location;
  }
  if (!ssoUrls.redirect && !ssoUrls.post) throw new SamlError("SAML_MALFORMED", "the IdP offers no HTTP-Redirect or HTTP-POST SingleSignOnService");
  const slo = children(idp, NS.metadata, "SingleLogoutService")
    .map((s) => ({ binding: bindingOf(attr(s, "Binding")), location: attr(s, "Location") }))
    .filter((s) => s.binding && s.location)
    .sort((a, b) => (a.binding === "redirect" ? -1 : 0) - (b.binding === "redirect" ? -1 : 0))[0];
  const signingCertsPem: string[] = [];
  for (const kd of children(idp, NS.metadata, "KeyDescriptor")) {
    const use = attr(kd, "use");
    if (use !== undefined && use !== "signing") continue;
    for (const c of descendants(kd, NS.ds, "X509Certificate")) {
      const pem = certToPem(text(c));
      if (!signingCertsPem.includes(pem)) signingCertsPem.push(pem);
    }
  }
  if (signingCertsPem.length === 0) throw new SamlError("SAML_NO_IDP_CERT", "the metadata lists no signing certificate");
  return {
    entityId,
    ssoUrls,
    sloUrl: slo?.location,
    sloBinding: slo?.binding,
    signingCertsPem,
    wantAuthnRequestsSigned: attr(idp, "WantAuthnRequestsSigned") === "true",
  };
}

