import { inflateRawSync } from "node:zlib";
import { createVerify } from "node:crypto";
import { DOMParser } from "@xmldom/xmldom";
import { SignedXml } from "xml-crypto";
import { describe, expect, it } from "vitest";
import { buildAuthnRequest, parseIdpMetadata, spMetadata } from "../../src/lib/saml/index.js";
import keys from "../fixtures/saml/test-keys.json" with { type: "json" };

const body = (pem: string): string => pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");

const idpMetadata = (certs: string[], extra = ""): string => `<?xml version="1.0"?>
<!-- exported by the IdP -->
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://idp.example.com/metadata">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" WantAuthnRequestsSigned="true">
    ${certs.map((c) => `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${body(c)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`).join("\n")}
    <md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${body(keys.spEncryption.certPem)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.example.com/slo/post"/>
    <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.com/slo"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.example.com/sso/post"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.com/sso"/>
    ${extra}
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;

describe("parseIdpMetadata", () => {
  it("reads the entity, the endpoints by binding and every signing certificate (rollover overlap), not the encryption one", () => {
    const meta = parseIdpMetadata(idpMetadata([keys.idp.certPem, keys.other.certPem]));
    expect(meta).toMatchObject({
      entityId: "https://idp.example.com/metadata",
      ssoUrls: { redirect: "https://idp.example.com/sso", post: "https://idp.example.com/sso/post" },
      sloUrl: "https://idp.example.com/slo",
      sloBinding: "redirect",
      wantAuthnRequestsSigned: true,
    });
    expect(meta.signingCertsPem.map(body)).toEqual([body(keys.idp.certPem), body(keys.other.certPem)]);
  });

  it("refuses metadata without a signing certificate, without SSO endpoints, with a DOCTYPE, or oversize", () => {
    expect(() => parseIdpMetadata(idpMetadata([]))).toThrow(expect.objectContaining({ code: "SAML_NO_IDP_CERT" }));
    expect(() => parseIdpMetadata(idpMetadata([keys.idp.certPem]).replace(/<md:SingleSignOnService[^>]*>/g, ""))).toThrow(expect.objectContaining({ code: "SAML_MALFORMED" }));
    expect(() => parseIdpMetadata(`<!DOCTYPE x [<!ENTITY e SYSTEM "http://attacker/">]>${idpMetadata([keys.idp.certPem])}`)).toThrow(expect.objectContaining({ code: "SAML_DTD_FORBIDDEN" }));
    expect(() => parseIdpMetadata(idpMetadata([keys.idp.certPem], `<md:Extensions>${"<x/>".repeat(150_000)}</md:Extensions>`))).toThrow(expect.objectContaining({ code: "SAML_TOO_LARGE" }));
  });

  it("refuses an aggregate with several identity providers (which one would be trusted?)", () => {
    const one = idpMetadata([keys.idp.certPem]).replace('<?xml version="1.0"?>', "");
    const two = `<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">${one}${one.replace("idp.example.com/metadata", "idp2.example.com/metadata")}</md:EntitiesDescriptor>`;
    expect(() => parseIdpMetadata(two)).toThrow(expect.objectContaining({ code: "SAML_MALFORMED" }));
  });
});

describe("spMetadata", () => {
  it("publishes the ACS, SLO, signing and encryption certificates, and always wants signed assertions", () => {
    const xml = spMetadata({ entityId: "https://k.test/sso/saml/a&b/metadata", acsUrl: "https://k.test/acs", sloUrl: "https://k.test/slo", signingCertPem: keys.idp.certPem, encryptionCertPem: keys.spEncryption.certPem, wantAssertionsSigned: true, authnRequestsSigned: true });
    const doc = new DOMParser().parseFromString(xml, "text/xml");
    const md = "urn:oasis:names:tc:SAML:2.0:metadata";
    expect(doc.documentElement.getAttribute("entityID")).toBe("https://k.test/sso/saml/a&b/metadata");
    const sp = doc.getElementsByTagNameNS(md, "SPSSODescriptor").item(0)!;
    expect(sp.getAttribute("WantAssertionsSigned")).toBe("true");
    expect(sp.getAttribute("AuthnRequestsSigned")).toBe("true");
    expect(doc.getElementsByTagNameNS(md, "AssertionConsumerService").item(0)!.getAttribute("Location")).toBe("https://k.test/acs");
    expect(doc.getElementsByTagNameNS(md, "KeyDescriptor").length).toBe(2);
    expect(() => spMetadata({ entityId: "x", acsUrl: "y", wantAssertionsSigned: true, authnRequestsSigned: true })).toThrow(expect.objectContaining({ code: "SAML_CONFIG" }));
  });
});

describe("buildAuthnRequest", () => {
  const base = { spEntityId: "https://k.test/metadata", acsUrl: "https://k.test/acs", idpSsoUrl: "https://idp.example.com/sso?tenant=1", relayState: "st_1" };

  it("HTTP-Redirect: a deflated request whose ID is returned, and a query signature the IdP can verify", () => {
    const req = buildAuthnRequest({ ...base, binding: "redirect", signingKeyPem: keys.idp.keyPem, forceAuthn: true });
    expect(req.binding).toBe("redirect");
    const url = new URL(req.url);
    expect(url.searchParams.get("tenant")).toBe("1");
    const xml = inflateRawSync(Buffer.from(url.searchParams.get("SAMLRequest")!, "base64")).toString();
    expect(xml).toContain(`ID="${req.id}"`);
    expect(xml).toContain('ForceAuthn="true"');
    expect(xml).toContain('AssertionConsumerServiceURL="https://k.test/acs"');
    expect(url.searchParams.get("SigAlg")).toBe("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256");
    const signed = req.url.slice(req.url.indexOf("SAMLRequest=")).split("&Signature=")[0]!;
    expect(createVerify("RSA-SHA256").update(signed).verify(keys.idp.certPem, url.searchParams.get("Signature")!, "base64")).toBe(true);
    expect(buildAuthnRequest({ ...base, binding: "redirect" }).id).not.toBe(req.id);
  });

  it("HTTP-POST: an enveloped XML signature over the request", () => {
    const req = buildAuthnRequest({ ...base, binding: "post", signingKeyPem: keys.idp.keyPem });
    if (req.binding !== "post") throw new Error("post expected");
    expect(req.fields.RelayState).toBe("st_1");
    const xml = Buffer.from(req.fields.SAMLRequest, "base64").toString();
    const sig = new SignedXml({ publicCert: keys.idp.certPem });
    sig.loadSignature(new DOMParser().parseFromString(xml, "text/xml").getElementsByTagNameNS("http://www.w3.org/2000/09/xmldsig#", "Signature").item(0)!);
    expect(sig.checkSignature(xml)).toBe(true);
  });

  it("keeps RelayState an opaque handle of at most 80 bytes", () => {
    expect(() => buildAuthnRequest({ ...base, binding: "redirect", relayState: "https://evil.example/".padEnd(81, "x") })).toThrow(expect.objectContaining({ code: "SAML_CONFIG" }));
  });
});
