/** Why a SAML message was refused. The SSO module maps every code to one sign-in failure for the user and logs the code. */
export type SamlErrorCode =
  | "SAML_CONFIG" // the caller's options are unusable (e.g. clock skew above 180 s)
  | "SAML_NO_IDP_CERT" // no pinned IdP certificate: fail closed
  | "SAML_MALFORMED" // not base64, not well-formed XML, not a SAML message, wrong shape
  | "SAML_TOO_LARGE" // above the size, depth or node-count limits
  | "SAML_DTD_FORBIDDEN" // DOCTYPE / ENTITY: no DTD processing at all
  | "SAML_FORBIDDEN_NODE" // comments or processing instructions (comment-injection in NameID and the like)
  | "SAML_DUPLICATE_ID" // two elements share an ID: the signature-wrapping precondition
  | "SAML_ASSERTION_COUNT" // not exactly one Assertion/EncryptedAssertion, or one outside its place
  | "SAML_SIGNATURE_MISSING" // neither the Response nor the Assertion is signed (or an encrypted assertion is unsigned)
  | "SAML_SIGNATURE_INVALID" // a signature that does not verify with a pinned certificate
  | "SAML_SIGNATURE_SHAPE" // a signature in the wrong place, with the wrong reference, or several references
  | "SAML_ALGORITHM_FORBIDDEN" // SHA-1, HMAC, #WithComments, an unknown transform
  | "SAML_DECRYPTION_FAILED" // no key, forbidden key transport (RSA 1.5), bad ciphertext
  | "SAML_STATUS" // the IdP answered with a non-Success status
  | "SAML_ISSUER_MISMATCH"
  | "SAML_DESTINATION_MISMATCH"
  | "SAML_RECIPIENT_MISMATCH"
  | "SAML_AUDIENCE_MISMATCH"
  | "SAML_IN_RESPONSE_TO" // not an answer to one of our requests (or unsolicited while IdP-initiated is off)
  | "SAML_NOT_YET_VALID"
  | "SAML_EXPIRED"
  | "SAML_SUBJECT_CONFIRMATION" // no bearer confirmation that passes
  | "SAML_REPLAY"; // this assertion id was already used

export class SamlError extends Error {
  constructor(
    readonly code: SamlErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "SamlError";
  }
}

export const isSamlError = (e: unknown): e is SamlError => e instanceof SamlError;
