import { decryptAssertion } from "./decrypt.js";
import { SamlError } from "./errors.js";
import { signatureOf, verifySignedElement } from "./signature.js";
import { decodeMessage, time, requireUniqueIds, requireSignaturesIn, reparse, requireIssuer, attributeValue } from "./response-parts.js";
import { NS, allElements, attr, certToPem, children, descendants, is, optionalChild, parseXml, requiredChild, text } from "./xml.js";

/** Where the SP records assertion ids it has accepted (Redis or the database, shared by every instance). */
export interface ReplayStore {
  /** Records `id` until `notOnOrAfter`; true if it was already recorded (a replay). Atomic: two concurrent calls cannot both get false. */
  seen(id: string, notOnOrAfter: Date): Promise<boolean>;
}

export interface ValidateResponseOptions {
  /** The connection's IdP entityID: Issuer of the Response (if any) and of the Assertion. */
  idpEntityId: string;
  /** The pinned IdP signing certificates (PEM or bare base64), several during a rollover. Empty: every response is refused. */
  idpCertsPem: readonly string[];
  spEntityId: string;
  /** This connection's Assertion Consumer Service URL: Destination and Recipient must equal it. */
  acsUrl: string;
  /** The IDs of AuthnRequests this browser has outstanding (the SSO module keeps them with the RelayState). */
  expectedRequestIds: readonly string[];
  /** Accept an unsolicited (IdP-initiated) response, one without InResponseTo. Off unless the admin allows it. */
  allowIdpInitiated?: boolean;
  now: Date;
  /** Tolerated clock difference with the IdP, 0–180 seconds. */
  clockSkewSeconds: number;
  /** The SP's encryption private key, when its metadata offers an encryption certificate. */
  decryptionKeyPem?: string;
  replay: ReplayStore;
}

export interface SamlAssertionResult {
  nameId: string;
  nameIdFormat?: string;
  sessionIndex?: string;
  /** When the IdP wants the SP session to end at the latest (AuthnStatement SessionNotOnOrAfter). */
  sessionNotOnOrAfter?: Date;
  /** Attribute name → values (always an array, single-valued or not). */
  attributes: Record<string, string[]>;
  issuer: string;
  assertionId: string;
  /** The end of the assertion's validity (the earlier of its SubjectConfirmationData and Conditions bounds). */
  notOnOrAfter: Date;
  /** The AuthnRequest this answers; undefined for an IdP-initiated response. */
  inResponseTo?: string;
}

const SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success";
const BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer";

/**
 * Validates a SAML Response (the base64 SAMLResponse of the HTTP-POST binding) for this SP and returns
 * who signed in. Everything it returns is read from XML whose signature verified with a pinned IdP
 * certificate; anything else throws a SamlError whose code says why (README "SAML library").
 */
export async function validateResponse(samlResponse: string, opts: ValidateResponseOptions): Promise<SamlAssertionResult> {
  const certs = checkOptions(opts);
  const xml = decodeMessage(samlResponse);
  const { doc, root, received } = parseReceived(xml);
  const { response, responseSigned } = readResponse(xml, root, certs, opts);
  const assertion = readAssertion({ xml, doc, received, response, responseSigned, certs, decryptionKeyPem: opts.decryptionKeyPem });
  return checkAssertion(assertion, response, responseSigned, opts);
}

function checkOptions(opts: ValidateResponseOptions): string[] {
  if (!Number.isFinite(opts.clockSkewSeconds) || opts.clockSkewSeconds < 0 || opts.clockSkewSeconds > 180) {
    throw new SamlError("SAML_CONFIG", "clockSkewSeconds must be between 0 and 180");
  }
  if (!opts.idpEntityId || !opts.spEntityId || !opts.acsUrl) throw new SamlError("SAML_CONFIG", "idpEntityId, spEntityId and acsUrl are required");
  if (opts.idpCertsPem.length === 0) throw new SamlError("SAML_NO_IDP_CERT", "no IdP certificate is pinned: nothing can be trusted");
  return opts.idpCertsPem.map(certToPem);
}

const statusOk = (r: Element): boolean => attr(requiredChild(requiredChild(r, NS.protocol, "Status"), NS.protocol, "StatusCode"), "Value") === SUCCESS;

/** One hardened parse of what arrived, and the structural rules every wrapping attack breaks. */
function parseReceived(xml: string): { doc: Document; root: Element; received: Element } {
  const doc = parseXml(xml);
  const root: Element = doc.documentElement;
  if (!is(root, NS.protocol, "Response")) throw new SamlError("SAML_MALFORMED", "not a SAML 2.0 Response");
  requireUniqueIds(doc);
  const found = [...descendants(doc, NS.assertion, "Assertion"), ...descendants(doc, NS.assertion, "EncryptedAssertion")];
  if (found.length === 0 && !statusOk(root)) throw new SamlError("SAML_STATUS", "the IdP did not sign the user in");
  if (found.length !== 1) throw new SamlError("SAML_ASSERTION_COUNT", `a Response carries exactly one assertion, not ${found.length}`);
  const received = found[0]!;
  if (received.parentNode !== root) throw new SamlError("SAML_ASSERTION_COUNT", "the assertion is not a child of the Response");
  requireSignaturesIn(doc, [root, received]);
  return { doc, root, received };
}

/** The Response, from its signed bytes when it is signed; its status, issuer and destination. */
function readResponse(xml: string, root: Element, certs: readonly string[], opts: ValidateResponseOptions): { response: Element; responseSigned: boolean } {
  const responseSigned = signatureOf(root) !== undefined;
  const response = responseSigned ? reparse(verifySignedElement(xml, root, certs), NS.protocol, "Response", attr(root, "ID")!) : root;
  if (attr(response, "Version") !== "2.0") throw new SamlError("SAML_MALFORMED", "not SAML 2.0");
  if (!statusOk(response)) throw new SamlError("SAML_STATUS", "the IdP did not sign the user in");
  requireIssuer(response, opts.idpEntityId, false);
  const destination = attr(response, "Destination");
  if (destination !== undefined && destination !== opts.acsUrl) throw new SamlError("SAML_DESTINATION_MISMATCH", "the Response is for another endpoint");
  return { response, responseSigned };
}

interface AssertionSource {
  xml: string;
  doc: Document;
  received: Element;
  response: Element;
  responseSigned: boolean;
  certs: readonly string[];
  decryptionKeyPem?: string;
}

/** The Assertion: from its own signed bytes, or from the signed Response's; never from `received`. */
function readAssertion(s: AssertionSource): Element {
  const inResponse = [...children(s.response, NS.assertion, "Assertion"), ...children(s.response, NS.assertion, "EncryptedAssertion")];
  if (inResponse.length !== 1) throw new SamlError("SAML_ASSERTION_COUNT", "the signed Response does not carry the assertion");
  const carried = inResponse[0]!;
  // Decrypted from the verified Response when it is signed; the plaintext must carry its own valid signature either way.
  if (is(carried, NS.assertion, "EncryptedAssertion")) return decryptedAssertion(carried, s);
  if (signatureOf(s.received)) return reparse(verifySignedElement(s.xml, s.received, s.certs), NS.assertion, "Assertion", attr(s.received, "ID") ?? "");
  if (s.responseSigned) return carried;
  throw new SamlError("SAML_SIGNATURE_MISSING", "neither the Response nor the Assertion is signed");
}

function decryptedAssertion(encrypted: Element, s: AssertionSource): Element {
  const plaintext = decryptAssertion(encrypted, s.decryptionKeyPem);
  // A plaintext that does not parse is a decryption failure like a bad padding: one code for both,
  // so CBC tampering cannot tell them apart (the Jager–Somorovsky XML Encryption oracle).
  let adoc: Document;
  try {
    adoc = parseXml(plaintext);
  } catch {
    throw new SamlError("SAML_DECRYPTION_FAILED", "the encrypted assertion could not be decrypted");
  }
  const inner: Element = adoc.documentElement;
  if (!is(inner, NS.assertion, "Assertion") || descendants(adoc, NS.assertion, "Assertion").length !== 1) {
    throw new SamlError("SAML_ASSERTION_COUNT", "an EncryptedAssertion holds exactly one Assertion");
  }
  requireUniqueIds(adoc);
  const id = attr(inner, "ID") ?? "";
  if (allElements(s.doc).some((e) => attr(e, "ID") === id)) throw new SamlError("SAML_DUPLICATE_ID", "the decrypted assertion's ID is used in the Response");
  requireSignaturesIn(adoc, [inner]);
  if (!signatureOf(inner)) throw new SamlError("SAML_SIGNATURE_MISSING", "an encrypted assertion must be signed itself");
  return reparse(verifySignedElement(plaintext, inner, s.certs), NS.assertion, "Assertion", id);
}

interface Clock {
  now: number;
  skew: number;
}

/** A bearer confirmation for this ACS, in time, answering one of our requests (or unsolicited when allowed). */
function confirmBearer(subject: Element, response: Element, responseSigned: boolean, opts: ValidateResponseOptions, { now, skew }: Clock): { notOnOrAfter: number; inResponseTo?: string } {
  const responseIrt = attr(response, "InResponseTo");
  const bearers = children(subject, NS.assertion, "SubjectConfirmation").filter((c) => attr(c, "Method") === BEARER);
  if (bearers.length === 0) throw new SamlError("SAML_SUBJECT_CONFIRMATION", "no bearer SubjectConfirmation");
  let firstError: SamlError | undefined;
  for (const bearer of bearers) {
    try {
      const data = requiredChild(bearer, NS.assertion, "SubjectConfirmationData");
      if (attr(data, "Recipient") !== opts.acsUrl) throw new SamlError("SAML_RECIPIENT_MISMATCH", "the assertion is for another endpoint");
      const notOnOrAfter = time(data, "NotOnOrAfter");
      if (notOnOrAfter === undefined) throw new SamlError("SAML_SUBJECT_CONFIRMATION", "a bearer confirmation without NotOnOrAfter");
      checkWindow(time(data, "NotBefore"), notOnOrAfter, { now, skew });
      const irt = attr(data, "InResponseTo");
      if (irt !== undefined && responseIrt !== undefined && irt !== responseIrt) throw new SamlError("SAML_IN_RESPONSE_TO", "the Response and the Assertion answer different requests");
      // An unsigned Response's InResponseTo is the sender's word only: then the assertion's own counts.
      const authenticated = irt ?? (responseSigned ? responseIrt : undefined);
      if (authenticated === undefined ? !opts.allowIdpInitiated : !opts.expectedRequestIds.includes(authenticated)) {
        throw new SamlError("SAML_IN_RESPONSE_TO", authenticated === undefined ? "unsolicited responses are not allowed for this connection" : "not an answer to a request of this browser");
      }
      return { notOnOrAfter, inResponseTo: authenticated };
    } catch (e) {
      if (!(e instanceof SamlError)) throw e;
      firstError ??= e;
    }
  }
  throw firstError!;
}

function checkWindow(notBefore: number | undefined, notOnOrAfter: number | undefined, { now, skew }: Clock): void {
  if (notBefore !== undefined && now + skew < notBefore) throw new SamlError("SAML_NOT_YET_VALID", "the assertion is not valid yet");
  if (notOnOrAfter !== undefined && now >= notOnOrAfter + skew) throw new SamlError("SAML_EXPIRED", "the assertion has expired");
}

/** Conditions: the time window and an audience restriction naming this SP (every restriction must). Returns its end. */
function checkConditions(assertion: Element, spEntityId: string, clock: Clock): number | undefined {
  const conditions = requiredChild(assertion, NS.assertion, "Conditions");
  const end = time(conditions, "NotOnOrAfter");
  checkWindow(time(conditions, "NotBefore"), end, clock);
  const restrictions = children(conditions, NS.assertion, "AudienceRestriction");
  if (restrictions.length === 0) throw new SamlError("SAML_AUDIENCE_MISMATCH", "the assertion names no audience");
  for (const r of restrictions) {
    if (!children(r, NS.assertion, "Audience").some((a) => text(a) === spEntityId)) throw new SamlError("SAML_AUDIENCE_MISMATCH", "the assertion is for another service provider");
  }
  return end;
}

function readAttributes(assertion: Element): Record<string, string[]> {
  const attributes = new Map<string, string[]>();
  for (const statement of children(assertion, NS.assertion, "AttributeStatement")) {
    for (const a of children(statement, NS.assertion, "Attribute")) {
      const name = attr(a, "Name");
      if (!name) continue;
      const values = children(a, NS.assertion, "AttributeValue").map(attributeValue).filter((v): v is string => v !== undefined);
      attributes.set(name, [...(attributes.get(name) ?? []), ...values]);
    }
  }
  return Object.fromEntries(attributes);
}

async function checkAssertion(assertion: Element, response: Element, responseSigned: boolean, opts: ValidateResponseOptions): Promise<SamlAssertionResult> {
  const clock = { now: opts.now.getTime(), skew: opts.clockSkewSeconds * 1000 };
  const assertionId = attr(assertion, "ID");
  if (!assertionId || attr(assertion, "Version") !== "2.0") throw new SamlError("SAML_MALFORMED", "the assertion has no ID or is not SAML 2.0");
  const issuer = requireIssuer(assertion, opts.idpEntityId, true)!;
  const subject = requiredChild(assertion, NS.assertion, "Subject");
  if (optionalChild(subject, NS.assertion, "EncryptedID")) throw new SamlError("SAML_MALFORMED", "an encrypted NameID is not supported");
  const nameIdEl = requiredChild(subject, NS.assertion, "NameID");
  const nameId = text(nameIdEl);
  if (!nameId) throw new SamlError("SAML_MALFORMED", "empty NameID");
  const confirmed = confirmBearer(subject, response, responseSigned, opts, clock);
  const conditionsEnd = checkConditions(assertion, opts.spEntityId, clock);
  const authn = children(assertion, NS.assertion, "AuthnStatement");
  if (authn.length !== 1) throw new SamlError("SAML_MALFORMED", "the assertion has no AuthnStatement");
  const sessionEnd = time(authn[0]!, "SessionNotOnOrAfter");
  if (sessionEnd !== undefined && clock.now >= sessionEnd + clock.skew) throw new SamlError("SAML_EXPIRED", "the IdP session has ended");
  const attributes = readAttributes(assertion);
  const notOnOrAfter = Math.min(confirmed.notOnOrAfter, conditionsEnd ?? Infinity);
  // Last, once everything else passed: an assertion id is used once, across instances, until it expires.
  if (await opts.replay.seen(assertionId, new Date(notOnOrAfter + clock.skew))) throw new SamlError("SAML_REPLAY", "this assertion was already used");
  return {
    nameId,
    nameIdFormat: attr(nameIdEl, "Format"),
    sessionIndex: attr(authn[0]!, "SessionIndex"),
    sessionNotOnOrAfter: sessionEnd === undefined ? undefined : new Date(sessionEnd),
    attributes,
    issuer,
    assertionId,
    notOnOrAfter: new Date(notOnOrAfter),
    inResponseTo: confirmed.inResponseTo,
  };
}
