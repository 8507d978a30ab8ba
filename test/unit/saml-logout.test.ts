import { createSign } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { buildLogoutRequest, buildLogoutResponse, validateLogoutRequest, validateLogoutResponse } from "../../src/lib/saml/index.js";
import keys from "../fixtures/saml/test-keys.json" with { type: "json" };

/** Single logout over HTTP-Redirect: the IdP's messages must be signed by a pinned key, with an allowed algorithm. */
const IDP = "https://idp.example.com/metadata";
const SLO = "https://k.test/sso/saml/acme/slo";
const opts = { idpEntityId: IDP, idpCertsPem: [keys.idp.certPem], sloUrl: SLO, now: new Date(), clockSkewSeconds: 60, expectedRequestIds: ["_l1"] };
const queryOf = (url: string): string => url.slice(url.indexOf("?") + 1);
// The test IdP's messages, made with the same builders (Issuer = the IdP, Destination = our SLO URL).
const idpLogoutResponse = (o: { inResponseTo?: string; to?: string } = {}): string =>
  queryOf(buildLogoutResponse({ spEntityId: IDP, idpSloUrl: o.to ?? SLO, inResponseTo: o.inResponseTo ?? "_l1", signingKeyPem: keys.idp.keyPem, relayState: "st_1" }));

describe("validateLogoutResponse / validateLogoutRequest", () => {
  it("accepts the IdP's signed LogoutResponse to our request, and its signed LogoutRequest", () => {
    expect(validateLogoutResponse(idpLogoutResponse(), opts)).toEqual({ inResponseTo: "_l1", success: true });
    const request = queryOf(buildLogoutRequest({ spEntityId: IDP, idpSloUrl: SLO, nameId: "alice@example.com", sessionIndex: "_s1", signingKeyPem: keys.idp.keyPem }).url);
    expect(validateLogoutRequest(request, opts)).toMatchObject({ nameId: "alice@example.com", sessionIndexes: ["_s1"] });
  });

  it("refuses unsigned, tampered, unpinned-key and SHA-1 messages", () => {
    const q = idpLogoutResponse();
    expect(() => validateLogoutResponse(q.replace(/&SigAlg=[^&]*&Signature=[^&]*/, ""), opts)).toThrow(expect.objectContaining({ code: "SAML_SIGNATURE_MISSING" }));
    const other = idpLogoutResponse({ inResponseTo: "_l2" });
    const swapped = q.replace(/SAMLResponse=[^&]*/, /SAMLResponse=[^&]*/.exec(other)![0]);
    expect(() => validateLogoutResponse(swapped, { ...opts, expectedRequestIds: ["_l1", "_l2"] })).toThrow(expect.objectContaining({ code: "SAML_SIGNATURE_INVALID" }));
    expect(() => validateLogoutResponse(q, { ...opts, idpCertsPem: [keys.attacker.certPem] })).toThrow(expect.objectContaining({ code: "SAML_SIGNATURE_INVALID" }));
    expect(() => validateLogoutResponse(q, { ...opts, idpCertsPem: [] })).toThrow(expect.objectContaining({ code: "SAML_NO_IDP_CERT" }));
    const unsigned = q.replace(/&SigAlg=.*$/, "");
    const sha1 = `${unsigned}&SigAlg=${encodeURIComponent("http://www.w3.org/2000/09/xmldsig#rsa-sha1")}`;
    const sha1Signed = `${sha1}&Signature=${encodeURIComponent(createSign("RSA-SHA1").update(sha1).sign(keys.idp.keyPem, "base64"))}`;
    expect(() => validateLogoutResponse(sha1Signed, opts)).toThrow(expect.objectContaining({ code: "SAML_ALGORITHM_FORBIDDEN" }));
  });

  it("refuses another destination, another request, a repeated parameter and an inflate bomb", () => {
    expect(() => validateLogoutResponse(idpLogoutResponse({ to: "https://other.test/slo" }), opts)).toThrow(expect.objectContaining({ code: "SAML_DESTINATION_MISMATCH" }));
    expect(() => validateLogoutResponse(idpLogoutResponse({ inResponseTo: "_l9" }), opts)).toThrow(expect.objectContaining({ code: "SAML_IN_RESPONSE_TO" }));
    expect(() => validateLogoutResponse(`${idpLogoutResponse()}&RelayState=x`, opts)).toThrow(expect.objectContaining({ code: "SAML_MALFORMED" }));
    const bomb = `SAMLResponse=${encodeURIComponent(deflateRawSync(Buffer.alloc(5_000_000, 0x20)).toString("base64"))}&SigAlg=${encodeURIComponent("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256")}`;
    const signedBomb = `${bomb}&Signature=${encodeURIComponent(createSign("RSA-SHA256").update(bomb).sign(keys.idp.keyPem, "base64"))}`;
    expect(() => validateLogoutResponse(signedBomb, opts)).toThrow(expect.objectContaining({ code: "SAML_MALFORMED" }));
  });
});
