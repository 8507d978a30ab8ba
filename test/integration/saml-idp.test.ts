import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAuthnRequest, buildLogoutRequest, parseIdpMetadata, spMetadata, validateLogoutRequest, validateLogoutResponse, validateResponse, type IdpMetadata, type ValidateResponseOptions } from "../../src/lib/saml/index.js";
import { CookieJar, browserLogin, followUntil, startSamlIdp, type RealSamlIdp } from "../helpers/saml-idp.js";
import { memoryReplay } from "../helpers/saml-forge.js";
import { makeKeyPair, type TestKeyPair } from "../helpers/saml-keys.js";

/**
 * The SAML adapter against a REAL identity provider: SimpleSAMLphp (../shared/tools/saml-idp) signs
 * alice in through its own login form, and what it posts back is validated by src/lib/saml. No
 * database, no Keyward server: the SP side is the adapter alone (the SSO module's routes come later).
 */

const SP = "http://127.0.0.1:9/sso/saml/acme/metadata";
const ACS = "http://127.0.0.1:9/sso/saml/acme/acs";
const SLO = "http://127.0.0.1:9/sso/saml/acme/slo";

let idp: RealSamlIdp;
let meta: IdpMetadata;
let signing: TestKeyPair;
let encryption: TestKeyPair;

beforeAll(async () => {
  idp = await startSamlIdp();
  meta = parseIdpMetadata(await (await fetch(idp.metadataUrl)).text());
  signing = makeKeyPair("rsa", "/CN=keyward-sp-signing");
  encryption = makeKeyPair("rsa", "/CN=keyward-sp-encryption");
}, 30_000);
afterAll(() => idp?.stop());

const alice = (): { username: string; password: string } => idp.users.find((u) => u.username === "alice@example.com")!;

const options = (over: Partial<ValidateResponseOptions> = {}): ValidateResponseOptions => ({
  idpEntityId: meta.entityId,
  idpCertsPem: meta.signingCertsPem,
  spEntityId: SP,
  acsUrl: ACS,
  expectedRequestIds: [],
  now: new Date(),
  clockSkewSeconds: 60,
  replay: memoryReplay(),
  ...over,
});

/** Registers the SP with the IdP (as an admin pastes our metadata) and signs alice in, SP-initiated. */
async function spInitiated(register: { metadata?: Partial<Parameters<typeof spMetadata>[0]>; idpOptions?: Record<string, unknown>; wantAssertionsSigned?: boolean }, binding: "redirect" | "post" = "redirect") {
  let xml = spMetadata({ entityId: SP, acsUrl: ACS, wantAssertionsSigned: true, authnRequestsSigned: true, signingCertPem: signing.certPem, ...register.metadata });
  // Only to let the IdP leave the assertion unsigned (a misconfigured IdP): Keyward's metadata always asks for it.
  if (register.wantAssertionsSigned === false) xml = xml.replace('WantAssertionsSigned="true"', 'WantAssertionsSigned="false"');
  idp.registerSp("acme", xml, register.idpOptions);
  const request = buildAuthnRequest({ spEntityId: SP, acsUrl: ACS, idpSsoUrl: meta.ssoUrls[binding] ?? idp.ssoUrl, binding, signingKeyPem: signing.keyPem, relayState: "st_0123456789" });
  const answer = request.binding === "post" ? await browserLogin(request.url, alice(), undefined, request.fields) : await browserLogin(request.url, alice());
  expect(answer.action).toBe(ACS);
  expect(answer.relayState).toBe("st_0123456789");
  return { request, answer, xml: Buffer.from(answer.samlResponse, "base64").toString("utf8") };
}

describe("SimpleSAMLphp as the IdP", () => {
  it("publishes metadata the adapter reads: entity, SSO endpoints, the signing certificate", () => {
    expect(meta.entityId).toBe(idp.entityId);
    expect(meta.ssoUrls.redirect).toBe(idp.ssoUrl);
    expect(meta.sloUrl).toBe(idp.sloUrl);
    expect(meta.signingCertsPem.map((c) => c.replace(/\s+/g, ""))).toContain(idp.certPem.replace(/\s+/g, ""));
  });

  it("SP-initiated (signed AuthnRequest, HTTP-Redirect): alice's assertion validates, attributes come out", async () => {
    const { request, answer, xml } = await spInitiated({});
    expect(xml).toContain("<saml:Assertion");
    const replay = memoryReplay();
    const result = await validateResponse(answer.samlResponse, options({ expectedRequestIds: [request.id], replay }));
    expect(result).toMatchObject({
      nameId: "alice@example.com",
      issuer: idp.entityId,
      inResponseTo: request.id,
      attributes: { email: ["alice@example.com"], name: ["Alice Admin"], groups: ["admins", "engineering"] },
    });
    expect(result.sessionIndex).toBeTruthy();
    // The same response posted twice is a replay.
    await expect(validateResponse(answer.samlResponse, options({ expectedRequestIds: [request.id], replay }))).rejects.toMatchObject({ code: "SAML_REPLAY" });
    // And it answers only this browser's request.
    await expect(validateResponse(answer.samlResponse, options({ expectedRequestIds: ["_another"] }))).rejects.toMatchObject({ code: "SAML_IN_RESPONSE_TO" });
  });

  it("SP-initiated over HTTP-POST with an enveloped-signed AuthnRequest", async () => {
    const { request, answer } = await spInitiated({}, "post");
    await expect(validateResponse(answer.samlResponse, options({ expectedRequestIds: [request.id] }))).resolves.toMatchObject({ nameId: "alice@example.com" });
  });

  it("an encrypted assertion is decrypted and still validated (signed inside)", async () => {
    const { request, answer, xml } = await spInitiated({ metadata: { encryptionCertPem: encryption.certPem }, idpOptions: { "assertion.encryption": true } });
    expect(xml).toContain("EncryptedAssertion");
    expect(xml).not.toContain("alice@example.com");
    const result = await validateResponse(answer.samlResponse, options({ expectedRequestIds: [request.id], decryptionKeyPem: encryption.keyPem }));
    expect(result.attributes.groups).toEqual(["admins", "engineering"]);
    await expect(validateResponse(answer.samlResponse, options({ expectedRequestIds: [request.id] }))).rejects.toMatchObject({ code: "SAML_DECRYPTION_FAILED" });
  });

  it("accepts the Response unsigned with the Assertion signed", async () => {
    const { request, answer, xml } = await spInitiated({ idpOptions: { "saml20.sign.response": false } });
    expect(xml.match(/<ds:Signature[ >]/g)).toHaveLength(1);
    await expect(validateResponse(answer.samlResponse, options({ expectedRequestIds: [request.id] }))).resolves.toMatchObject({ nameId: "alice@example.com" });
  });

  it("accepts the Response signed with the Assertion unsigned", async () => {
    const { request, answer, xml } = await spInitiated({ idpOptions: { "saml20.sign.assertion": false }, wantAssertionsSigned: false });
    expect(xml.match(/<ds:Signature[ >]/g)).toHaveLength(1);
    await expect(validateResponse(answer.samlResponse, options({ expectedRequestIds: [request.id] }))).resolves.toMatchObject({ nameId: "alice@example.com" });
  });

  it("refuses a response with neither signed", async () => {
    const { request, answer, xml } = await spInitiated({ idpOptions: { "saml20.sign.assertion": false, "saml20.sign.response": false }, wantAssertionsSigned: false });
    expect(xml).not.toContain("<ds:Signature");
    await expect(validateResponse(answer.samlResponse, options({ expectedRequestIds: [request.id] }))).rejects.toMatchObject({ code: "SAML_SIGNATURE_MISSING" });
  });

  it("refuses IdP-initiated sign-in unless the connection allows it", async () => {
    idp.registerSp("acme", spMetadata({ entityId: SP, acsUrl: ACS, wantAssertionsSigned: true, authnRequestsSigned: false }));
    const answer = await browserLogin(`${idp.initSsoUrl}${encodeURIComponent(SP)}&RelayState=st_idp`, alice());
    await expect(validateResponse(answer.samlResponse, options())).rejects.toMatchObject({ code: "SAML_IN_RESPONSE_TO" });
    await expect(validateResponse(answer.samlResponse, options({ allowIdpInitiated: true }))).resolves.toMatchObject({ nameId: "alice@example.com", inResponseTo: undefined });
  });

  it("refuses a response when another certificate is pinned (the IdP's key was not the one configured)", async () => {
    const { request, answer } = await spInitiated({});
    await expect(validateResponse(answer.samlResponse, options({ expectedRequestIds: [request.id], idpCertsPem: [makeKeyPair().certPem] }))).rejects.toMatchObject({ code: "SAML_SIGNATURE_INVALID" });
  });

  it("single logout: SP-initiated, and IdP-initiated, both signed over HTTP-Redirect", async () => {
    idp.registerSp("acme", spMetadata({ entityId: SP, acsUrl: ACS, sloUrl: SLO, wantAssertionsSigned: true, authnRequestsSigned: true, signingCertPem: signing.certPem }), { "sign.logout": true });
    const jar = new CookieJar();
    const request = buildAuthnRequest({ spEntityId: SP, acsUrl: ACS, idpSsoUrl: idp.ssoUrl, binding: "redirect", signingKeyPem: signing.keyPem, relayState: "st_slo" });
    const answer = await browserLogin(request.url, alice(), jar);
    const signedIn = await validateResponse(answer.samlResponse, options({ expectedRequestIds: [request.id] }));
    const slo = { idpEntityId: meta.entityId, idpCertsPem: meta.signingCertsPem, sloUrl: SLO, now: new Date(), clockSkewSeconds: 60 };

    const logout = buildLogoutRequest({ spEntityId: SP, idpSloUrl: meta.sloUrl!, nameId: signedIn.nameId, nameIdFormat: signedIn.nameIdFormat, sessionIndex: signedIn.sessionIndex, signingKeyPem: signing.keyPem, relayState: "st_out" });
    const query = await followUntil(logout.url, SLO, jar);
    expect(validateLogoutResponse(query, { ...slo, expectedRequestIds: [logout.id] })).toEqual({ inResponseTo: logout.id, success: true });
    expect(() => validateLogoutResponse(query, { ...slo, expectedRequestIds: ["_other"] })).toThrow(expect.objectContaining({ code: "SAML_IN_RESPONSE_TO" }));
    expect(() => validateLogoutResponse(query.replace(/&Signature=[^&]*/, ""), { ...slo, expectedRequestIds: [logout.id] })).toThrow(expect.objectContaining({ code: "SAML_SIGNATURE_MISSING" }));
    expect(() => validateLogoutResponse(query, { ...slo, idpCertsPem: [makeKeyPair().certPem], expectedRequestIds: [logout.id] })).toThrow(expect.objectContaining({ code: "SAML_SIGNATURE_INVALID" }));

    // IdP-initiated: sign in again, then end the IdP session from the IdP: it sends us a LogoutRequest.
    const again = buildAuthnRequest({ spEntityId: SP, acsUrl: ACS, idpSsoUrl: idp.ssoUrl, binding: "redirect", signingKeyPem: signing.keyPem, relayState: "st_2" });
    const second = await validateResponse((await browserLogin(again.url, alice(), jar)).samlResponse, options({ expectedRequestIds: [again.id] }));
    const incoming = await followUntil(`${idp.url}/saml2/idp/initSLO.php?RelayState=${encodeURIComponent(`${idp.url}/`)}`, SLO, jar);
    expect(validateLogoutRequest(incoming, slo)).toMatchObject({ nameId: "alice@example.com", sessionIndexes: [second.sessionIndex] });
  });
});
