import { DOMParser, XMLSerializer } from "@xmldom/xmldom";
import { describe, expect, it } from "vitest";
import { validateResponse, type ValidateResponseOptions } from "../../src/lib/saml/index.js";
import fixtures from "../fixtures/saml/simplesamlphp.json" with { type: "json" };
import { A, ECDSA_SHA256, memoryReplay, P, RSA_SHA1, SHA1, assertionXml, encryptAssertion, responseXml, signElement } from "../helpers/saml-forge.js";
import keys from "../fixtures/saml/test-keys.json" with { type: "json" };

/**
 * The forged-response corpus (issue 35, "Security"). Every forgery starts from a REAL response of
 * SimpleSAMLphp (test/fixtures/saml/record.ts recorded them: alice's login answering a real
 * AuthnRequest) or from a response signed by a test key that the test pins as the IdP's; each is
 * refused with the code that names the defence that caught it.
 */

type Shape = keyof typeof fixtures.responses;
const DS = "http://www.w3.org/2000/09/xmldsig#";
const real = (shape: Shape): string => fixtures.responses[shape].xml;
const issued = (xml: string): number => Date.parse(/IssueInstant="([^"]+)"/.exec(xml)![1]!);
const b64 = (xml: string): string => Buffer.from(xml).toString("base64");

const forRealShape = (shape: Shape, over: Partial<ValidateResponseOptions> = {}): ValidateResponseOptions => ({
  idpEntityId: fixtures.idpEntityId,
  idpCertsPem: [fixtures.idpCertPem],
  spEntityId: fixtures.spEntityId,
  acsUrl: fixtures.acsUrl,
  expectedRequestIds: [fixtures.responses[shape].requestId],
  now: new Date(issued(real(shape)) + 2000),
  clockSkewSeconds: 60,
  decryptionKeyPem: fixtures.spEncryptionKeyPem,
  replay: memoryReplay(),
  ...over,
});

const refusedWith = async (xml: string, code: string, opts: ValidateResponseOptions): Promise<void> => {
  await expect(validateResponse(b64(xml), opts)).rejects.toMatchObject({ name: "SamlError", code });
};

const parse = (xml: string): Document => new DOMParser().parseFromString(xml, "text/xml");
const ser = (doc: Node): string => new XMLSerializer().serializeToString(doc);
const el = (doc: Document, ns: string, name: string, i = 0): Element => doc.getElementsByTagNameNS(ns, name).item(i)!;

describe("real SimpleSAMLphp responses", () => {
  it.each(["both-signed", "assertion-signed", "response-signed", "encrypted"] as const)("accepts the %s response and reads alice", async (shape) => {
    const replay = memoryReplay();
    const result = await validateResponse(b64(real(shape)), forRealShape(shape, { replay }));
    expect(result).toMatchObject({
      nameId: "alice@example.com",
      nameIdFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
      issuer: fixtures.idpEntityId,
      inResponseTo: fixtures.responses[shape].requestId,
      attributes: { email: ["alice@example.com"], name: ["Alice Admin"], groups: ["admins", "engineering"] },
    });
    expect(result.sessionIndex).toMatch(/^_/);
    expect(replay.ids.get(result.assertionId)!.getTime()).toBe(result.notOnOrAfter.getTime() + 60_000);
  });

  it("accepts a certificate rollover: the old and the new certificate pinned together", async () => {
    await expect(validateResponse(b64(real("both-signed")), forRealShape("both-signed", { idpCertsPem: [keys.other.certPem, fixtures.idpCertPem] }))).resolves.toMatchObject({ nameId: "alice@example.com" });
  });
});

describe("signature wrapping (XSW1–XSW8) on real responses", () => {
  const evilAssertion = (doc: Document, id: string): Element => {
    const evil = el(doc, A, "Assertion").cloneNode(true) as Element;
    evil.setAttribute("ID", id);
    for (const s of Array.from(evil.getElementsByTagNameNS(DS, "Signature"))) s.parentNode!.removeChild(s);
    const nameId = evil.getElementsByTagNameNS(A, "NameID").item(0)!;
    nameId.textContent = "admin@example.com";
    return evil;
  };

  it("XSW1: an evil unsigned Response wraps the signed one inside its Signature/Object", async () => {
    const doc = parse(real("response-signed"));
    const original = doc.documentElement;
    const evil = original.cloneNode(true) as Element;
    evil.setAttribute("ID", "_evil");
    const sig = el(doc, DS, "Signature").cloneNode(true) as Element;
    for (const s of Array.from(evil.getElementsByTagNameNS(DS, "Signature"))) s.parentNode!.removeChild(s);
    evil.getElementsByTagNameNS(A, "Assertion").item(0)!.setAttribute("ID", "_evil-assertion");
    evil.getElementsByTagNameNS(A, "NameID").item(0)!.textContent = "admin@example.com";
    const object = doc.createElementNS(DS, "ds:Object");
    object.appendChild(original.cloneNode(true));
    sig.appendChild(object);
    evil.insertBefore(sig, evil.getElementsByTagNameNS(P, "Status").item(0));
    await refusedWith(ser(evil), "SAML_ASSERTION_COUNT", forRealShape("response-signed"));
  });

  it("XSW2: the signed Response detached before the evil Response's Signature", async () => {
    const doc = parse(real("response-signed"));
    const original = doc.documentElement.cloneNode(true) as Element;
    const evil = doc.documentElement;
    evil.setAttribute("ID", "_evil");
    evil.getElementsByTagNameNS(A, "Assertion").item(0)!.setAttribute("ID", "_evil-assertion");
    evil.getElementsByTagNameNS(A, "NameID").item(0)!.textContent = "admin@example.com";
    evil.insertBefore(original, el(doc, DS, "Signature"));
    await refusedWith(ser(doc), "SAML_ASSERTION_COUNT", forRealShape("response-signed"));
  });

  it("XSW3: an evil assertion (new ID) before the signed one", async () => {
    const doc = parse(real("assertion-signed"));
    const signed = el(doc, A, "Assertion");
    signed.parentNode!.insertBefore(evilAssertion(doc, "_evil"), signed);
    await refusedWith(ser(doc), "SAML_ASSERTION_COUNT", forRealShape("assertion-signed"));
  });

  it("XSW3 with a duplicated ID: the evil assertion takes the signed assertion's ID", async () => {
    const doc = parse(real("assertion-signed"));
    const signed = el(doc, A, "Assertion");
    signed.parentNode!.insertBefore(evilAssertion(doc, signed.getAttribute("ID")!), signed);
    await refusedWith(ser(doc), "SAML_DUPLICATE_ID", forRealShape("assertion-signed"));
  });

  it("XSW4: the signed assertion wrapped inside the evil one", async () => {
    const doc = parse(real("assertion-signed"));
    const signed = el(doc, A, "Assertion");
    const evil = evilAssertion(doc, "_evil");
    evil.appendChild(signed.cloneNode(true));
    signed.parentNode!.replaceChild(evil, signed);
    await refusedWith(ser(doc), "SAML_ASSERTION_COUNT", forRealShape("assertion-signed"));
  });

  it("XSW5: the evil assertion carries the copied signature, the signed one appended after it", async () => {
    const doc = parse(real("assertion-signed"));
    const signed = el(doc, A, "Assertion");
    const evil = evilAssertion(doc, "_evil");
    evil.insertBefore(el(doc, DS, "Signature").cloneNode(true), evil.getElementsByTagNameNS(A, "Subject").item(0));
    signed.parentNode!.insertBefore(evil, signed);
    await refusedWith(ser(doc), "SAML_ASSERTION_COUNT", forRealShape("assertion-signed"));
  });

  it("XSW6: the signed assertion hidden in the evil assertion's Signature/Object", async () => {
    const doc = parse(real("assertion-signed"));
    const signed = el(doc, A, "Assertion");
    const evil = evilAssertion(doc, "_evil");
    const sig = el(doc, DS, "Signature").cloneNode(true) as Element;
    const object = doc.createElementNS(DS, "ds:Object");
    object.appendChild(signed.cloneNode(true));
    sig.appendChild(object);
    evil.insertBefore(sig, evil.getElementsByTagNameNS(A, "Subject").item(0));
    signed.parentNode!.replaceChild(evil, signed);
    await refusedWith(ser(doc), "SAML_ASSERTION_COUNT", forRealShape("assertion-signed"));
  });

  it("XSW7: the signed assertion in Extensions, the evil one in its place", async () => {
    const doc = parse(real("assertion-signed"));
    const signed = el(doc, A, "Assertion");
    const ext = doc.createElementNS(P, "samlp:Extensions");
    ext.appendChild(signed.cloneNode(true));
    doc.documentElement.insertBefore(ext, el(doc, P, "Status"));
    signed.parentNode!.replaceChild(evilAssertion(doc, "_evil"), signed);
    await refusedWith(ser(doc), "SAML_ASSERTION_COUNT", forRealShape("assertion-signed"));
  });

  it("XSW7 without a second Assertion: the signature alone moved into Extensions", async () => {
    const doc = parse(real("assertion-signed"));
    const sig = el(doc, DS, "Signature");
    const ext = doc.createElementNS(P, "samlp:Extensions");
    sig.parentNode!.removeChild(sig);
    ext.appendChild(sig);
    doc.documentElement.insertBefore(ext, el(doc, P, "Status"));
    doc.getElementsByTagNameNS(A, "NameID").item(0)!.textContent = "admin@example.com";
    await refusedWith(ser(doc), "SAML_SIGNATURE_SHAPE", forRealShape("assertion-signed"));
  });

  it("XSW8: the evil assertion's Signature/Object holds the original without its signature", async () => {
    const doc = parse(real("assertion-signed"));
    const signed = el(doc, A, "Assertion");
    const evil = evilAssertion(doc, "_evil");
    const sig = el(doc, DS, "Signature").cloneNode(true) as Element;
    const inner = signed.cloneNode(true) as Element;
    for (const s of Array.from(inner.getElementsByTagNameNS(DS, "Signature"))) s.parentNode!.removeChild(s);
    const object = doc.createElementNS(DS, "ds:Object");
    object.appendChild(inner);
    sig.appendChild(object);
    evil.insertBefore(sig, evil.getElementsByTagNameNS(A, "Subject").item(0));
    signed.parentNode!.replaceChild(evil, signed);
    await refusedWith(ser(doc), "SAML_ASSERTION_COUNT", forRealShape("assertion-signed"));
  });

  it("an edited value inside a signed Response and a signed Assertion", async () => {
    for (const shape of ["both-signed", "response-signed", "assertion-signed"] as const) {
      const forged = real(shape).replace(">alice@example.com</saml:NameID>", ">admin@example.com</saml:NameID>");
      await refusedWith(forged, "SAML_SIGNATURE_INVALID", forRealShape(shape));
    }
  });

  it("a signed Response whose assertion was swapped for an unsigned evil one", async () => {
    const doc = parse(real("response-signed"));
    const signed = el(doc, A, "Assertion");
    signed.parentNode!.replaceChild(evilAssertion(doc, signed.getAttribute("ID")!), signed);
    await refusedWith(ser(doc), "SAML_SIGNATURE_INVALID", forRealShape("response-signed"));
  });

  it("a signature whose Reference points at another element", async () => {
    const forged = real("assertion-signed").replace(/<ds:Reference URI="#[^"]+"/, `<ds:Reference URI="#${/samlp:Response[^>]* ID="([^"]+)"/.exec(real("assertion-signed"))![1]}"`);
    await refusedWith(forged, "SAML_SIGNATURE_SHAPE", forRealShape("assertion-signed"));
  });

  it("an unsigned response (both signatures stripped)", async () => {
    const doc = parse(real("both-signed"));
    for (const s of Array.from(doc.getElementsByTagNameNS(DS, "Signature"))) s.parentNode!.removeChild(s);
    await refusedWith(ser(doc), "SAML_SIGNATURE_MISSING", forRealShape("both-signed"));
  });
});

describe("parser hardening", () => {
  it("comment injection in NameID (alice@example.com<!---->.evil.com)", async () => {
    const forged = real("both-signed").replace(">alice@example.com</saml:NameID>", ">alice@example.com<!---->.evil.com</saml:NameID>");
    await refusedWith(forged, "SAML_FORBIDDEN_NODE", forRealShape("both-signed"));
  });

  it("a DOCTYPE with an entity bomb", async () => {
    const bomb = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>`;
    await refusedWith(bomb + real("both-signed").replace(">alice@example.com</saml:NameID>", ">&c;</saml:NameID>"), "SAML_DTD_FORBIDDEN", forRealShape("both-signed"));
  });

  it("an external entity (XXE)", async () => {
    const xxe = `<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>`;
    await refusedWith(xxe + real("both-signed"), "SAML_DTD_FORBIDDEN", forRealShape("both-signed"));
  });

  it("an oversize response (above 256 KB)", async () => {
    const forged = real("both-signed").replace("<samlp:Status>", `<samlp:Extensions>${"<x/>".repeat(70_000)}</samlp:Extensions><samlp:Status>`);
    await refusedWith(forged, "SAML_TOO_LARGE", forRealShape("both-signed"));
  });

  it("nesting deeper than the limit", async () => {
    const forged = real("both-signed").replace("<samlp:Status>", `<samlp:Extensions>${"<x>".repeat(100)}${"</x>".repeat(100)}</samlp:Extensions><samlp:Status>`);
    await refusedWith(forged, "SAML_TOO_LARGE", forRealShape("both-signed"));
  });

  it("not base64, not XML, not a Response", async () => {
    await expect(validateResponse("%%%not base64", forRealShape("both-signed"))).rejects.toMatchObject({ code: "SAML_MALFORMED" });
    await refusedWith("<samlp:Response", "SAML_MALFORMED", forRealShape("both-signed"));
    await refusedWith(`<samlp:AuthnRequest xmlns:samlp="${P}"/>`, "SAML_MALFORMED", forRealShape("both-signed"));
  });
});

describe("algorithm allow-lists and pinned keys", () => {
  const { idp, attacker } = keys;
  const now = Date.parse("2026-06-01T12:00:00Z");
  const base = { issuer: "https://idp.example.com", audience: "https://sp.example.com/metadata", recipient: "https://sp.example.com/acs", now };
  const opts = (over: Partial<ValidateResponseOptions> = {}): ValidateResponseOptions => ({
    idpEntityId: base.issuer,
    idpCertsPem: [idp.certPem],
    spEntityId: base.audience,
    acsUrl: base.recipient,
    expectedRequestIds: ["_req1"],
    now: new Date(now + 1000),
    clockSkewSeconds: 30,
    replay: memoryReplay(),
    ...over,
  });
  const signedAssertionResponse = (shape: Partial<Parameters<typeof assertionXml>[0]> = {}, sign: Partial<Parameters<typeof signElement>[2]> = {}, status?: string): string => {
    const assertion = assertionXml({ ...base, id: "_a1", inResponseTo: "_req1", ...shape });
    return responseXml({ issuer: base.issuer, destination: base.recipient, inResponseTo: "_req1", now, status, inner: signElement(assertion, shape.id ?? "_a1", { keyPem: idp.keyPem, ...sign }) });
  };

  it("accepts the test IdP's well-formed response (the baseline the forgeries below depart from)", async () => {
    await expect(validateResponse(b64(signedAssertionResponse()), opts())).resolves.toMatchObject({ nameId: "alice@example.com", assertionId: "_a1" });
  });

  it("accepts an ECDSA-SHA256 signature by a pinned EC key", async () => {
    const ec = keys.idpEc;
    const xml = signedAssertionResponse({}, { keyPem: ec.keyPem, algorithm: ECDSA_SHA256 });
    await expect(validateResponse(b64(xml), opts({ idpCertsPem: [ec.certPem] }))).resolves.toMatchObject({ nameId: "alice@example.com" });
  });

  it("accepts inclusive c14n 1.0 signatures made in place on both the Response and the Assertion", async () => {
    const C14N = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315";
    const unsigned = responseXml({ id: "_r1", issuer: base.issuer, destination: base.recipient, inResponseTo: "_req1", now, inner: assertionXml({ ...base, id: "_a1", inResponseTo: "_req1" }) });
    const both = signElement(signElement(unsigned, "_a1", { keyPem: idp.keyPem, canonicalization: C14N }), "_r1", { keyPem: idp.keyPem, canonicalization: C14N });
    await expect(validateResponse(b64(both), opts())).resolves.toMatchObject({ nameId: "alice@example.com" });
  });

  it("a signature by an unpinned key that names itself in KeyInfo", async () => {
    const xml = signedAssertionResponse({}, { keyPem: attacker.keyPem, keyInfoCertPem: attacker.certPem });
    await refusedWith(xml, "SAML_SIGNATURE_INVALID", opts());
  });

  it("an RSA-SHA1 signature (SHA-1 digest), even by the pinned key", async () => {
    await refusedWith(signedAssertionResponse({}, { algorithm: RSA_SHA1, digest: SHA1 }), "SAML_ALGORITHM_FORBIDDEN", opts());
    await refusedWith(signedAssertionResponse({}, { digest: SHA1 }), "SAML_ALGORITHM_FORBIDDEN", opts());
  });

  it("an HMAC signature method (key confusion with the public certificate)", async () => {
    const xml = signedAssertionResponse().replace("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", "http://www.w3.org/2000/09/xmldsig#hmac-sha1");
    await refusedWith(xml, "SAML_ALGORITHM_FORBIDDEN", opts());
  });

  it("#WithComments canonicalization, in SignedInfo or as a transform", async () => {
    const withComments = "http://www.w3.org/2001/10/xml-exc-c14n#WithComments";
    await refusedWith(real("both-signed").replace(/CanonicalizationMethod Algorithm="[^"]+"/, `CanonicalizationMethod Algorithm="${withComments}"`), "SAML_ALGORITHM_FORBIDDEN", forRealShape("both-signed"));
    await refusedWith(real("both-signed").replace(/Transform Algorithm="http:\/\/www.w3.org\/2001\/10\/xml-exc-c14n#"/, `Transform Algorithm="${withComments}"`), "SAML_ALGORITHM_FORBIDDEN", forRealShape("both-signed"));
  });

  it("fails closed when no IdP certificate is configured", async () => {
    await refusedWith(signedAssertionResponse(), "SAML_NO_IDP_CERT", opts({ idpCertsPem: [] }));
  });

  it("refuses a clock skew above 180 seconds as a configuration error", async () => {
    await refusedWith(signedAssertionResponse(), "SAML_CONFIG", opts({ clockSkewSeconds: 600 }));
  });

  it("a signed error Response carrying an unsigned assertion", async () => {
    const error = responseXml({ id: "_r1", issuer: base.issuer, destination: base.recipient, inResponseTo: "_req1", now, status: "urn:oasis:names:tc:SAML:2.0:status:Responder", inner: "" });
    const signed = signElement(error, "_r1", { keyPem: idp.keyPem });
    const forged = signed.replace("</samlp:Response>", `${assertionXml({ ...base, inResponseTo: "_req1" })}</samlp:Response>`);
    await refusedWith(forged, "SAML_SIGNATURE_INVALID", opts());
    // …and the same error response, re-signed after the assertion was added, is still an error.
    const resigned = signElement(error.replace("</samlp:Response>", `${assertionXml({ ...base, inResponseTo: "_req1" })}</samlp:Response>`), "_r1", { keyPem: idp.keyPem });
    await refusedWith(resigned, "SAML_STATUS", opts());
  });

  it("an encrypted unsigned assertion (anyone can encrypt to the SP's public certificate)", async () => {
    const sp = keys.spEncryption;
    const encrypted = encryptAssertion(assertionXml({ ...base, id: "_a1", inResponseTo: "_req1" }), sp.certPem);
    await refusedWith(responseXml({ issuer: base.issuer, destination: base.recipient, inResponseTo: "_req1", now, inner: encrypted }), "SAML_SIGNATURE_MISSING", opts({ decryptionKeyPem: sp.keyPem }));
    // Even inside a validly signed Response, the decrypted assertion must carry its own signature.
    const signedResponse = signElement(responseXml({ id: "_r1", issuer: base.issuer, destination: base.recipient, inResponseTo: "_req1", now, inner: encrypted }), "_r1", { keyPem: idp.keyPem });
    await refusedWith(signedResponse, "SAML_SIGNATURE_MISSING", opts({ decryptionKeyPem: sp.keyPem }));
  });

  it("decrypts a signed encrypted assertion (AES-256-GCM and AES-128-CBC), refuses RSA PKCS#1 v1.5 key transport", async () => {
    const sp = keys.spEncryption;
    const signed = signElement(assertionXml({ ...base, id: "_a1", inResponseTo: "_req1" }), "_a1", { keyPem: idp.keyPem });
    for (const cipher of ["aes-256-gcm", "aes-128-cbc"] as const) {
      const xml = responseXml({ issuer: base.issuer, destination: base.recipient, inResponseTo: "_req1", now, inner: encryptAssertion(signed, sp.certPem, cipher) });
      await expect(validateResponse(b64(xml), opts({ decryptionKeyPem: sp.keyPem }))).resolves.toMatchObject({ nameId: "alice@example.com" });
    }
    const rsa15 = responseXml({ issuer: base.issuer, destination: base.recipient, inResponseTo: "_req1", now, inner: encryptAssertion(signed, sp.certPem, "aes-128-cbc", "http://www.w3.org/2001/04/xmlenc#rsa-1_5") });
    await refusedWith(rsa15, "SAML_DECRYPTION_FAILED", opts({ decryptionKeyPem: sp.keyPem }));
    await refusedWith(rsa15, "SAML_DECRYPTION_FAILED", opts());
  });

  it("an assertion for another audience", async () => {
    await refusedWith(signedAssertionResponse({ audience: "https://other-sp.example.com" }), "SAML_AUDIENCE_MISMATCH", opts());
  });

  it("an assertion for another ACS (Recipient) and a Response for another Destination", async () => {
    await refusedWith(signedAssertionResponse({ recipient: "https://other-sp.example.com/acs" }), "SAML_RECIPIENT_MISMATCH", opts());
    await refusedWith(real("both-signed"), "SAML_DESTINATION_MISMATCH", forRealShape("both-signed", { acsUrl: "https://other.test/acs" }));
  });

  it("an assertion from another issuer", async () => {
    await refusedWith(signedAssertionResponse({ issuer: "https://evil-idp.example.com" }), "SAML_ISSUER_MISMATCH", opts());
    await refusedWith(real("both-signed"), "SAML_ISSUER_MISMATCH", forRealShape("both-signed", { idpEntityId: "https://other-idp.test" }));
  });

  it("an expired assertion and one not valid yet (skew bounded)", async () => {
    await refusedWith(real("both-signed"), "SAML_EXPIRED", forRealShape("both-signed", { now: new Date(issued(real("both-signed")) + 10 * 60_000) }));
    await refusedWith(real("both-signed"), "SAML_NOT_YET_VALID", forRealShape("both-signed", { now: new Date(issued(real("both-signed")) - 10 * 60_000) }));
    // Within the skew it passes: 300 s lifetime + 60 s skew.
    await expect(validateResponse(b64(real("both-signed")), forRealShape("both-signed", { now: new Date(issued(real("both-signed")) + 330_000) }))).resolves.toBeDefined();
  });

  it("a wrong InResponseTo, and an unsolicited response unless IdP-initiated sign-in is allowed", async () => {
    await refusedWith(real("both-signed"), "SAML_IN_RESPONSE_TO", forRealShape("both-signed", { expectedRequestIds: ["_someone-elses-request"] }));
    const unsolicited = signedAssertionResponse({ inResponseTo: undefined }).replace(' InResponseTo="_req1"', "");
    await refusedWith(unsolicited, "SAML_IN_RESPONSE_TO", opts());
    await expect(validateResponse(b64(unsolicited), opts({ allowIdpInitiated: true, expectedRequestIds: [] }))).resolves.toMatchObject({ inResponseTo: undefined });
    // An unsigned Response's InResponseTo does not make a signed unsolicited assertion solicited.
    const dressed = signedAssertionResponse({ inResponseTo: undefined });
    await refusedWith(dressed, "SAML_IN_RESPONSE_TO", opts());
  });

  it("a replay of an accepted response", async () => {
    const replay = memoryReplay();
    await validateResponse(b64(real("both-signed")), forRealShape("both-signed", { replay }));
    await refusedWith(real("both-signed"), "SAML_REPLAY", forRealShape("both-signed", { replay }));
  });

  it("a signature in the wrong place and two signatures on one element", async () => {
    const twice = real("assertion-signed").replace(/(<ds:Signature[\s\S]*?<\/ds:Signature>)/, "$1$1");
    await refusedWith(twice, "SAML_SIGNATURE_SHAPE", forRealShape("assertion-signed"));
  });
  it("reads a NameID split by CDATA whole, as it was signed, never truncated at the split", async () => {
    const split = signedAssertionResponse({ nameId: "alice@example.com<![CDATA[]]>.evil.com", attributes: { email: ["x"] } });
    await expect(validateResponse(b64(split), opts())).resolves.toMatchObject({ nameId: "alice@example.com.evil.com" });
  });

  it("an Assertion in a look-alike namespace is not an assertion", async () => {
    const lookalike = signedAssertionResponse().replace("</samlp:Response>", `<evil:Assertion xmlns:evil="urn:evil" ID="_x"><evil:Subject>admin</evil:Subject></evil:Assertion></samlp:Response>`);
    await expect(validateResponse(b64(lookalike), opts())).resolves.toMatchObject({ nameId: "alice@example.com" });
    const prefixed = signedAssertionResponse().replace("</samlp:Response>", `<saml:Assertion ID="_x2"/></samlp:Response>`);
    await refusedWith(prefixed, "SAML_ASSERTION_COUNT", opts());
  });
});
