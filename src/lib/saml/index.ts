/**
 * The SAML 2.0 service-provider adapter (ARCHITECTURE rule 9: the only importer of xml-crypto and
 * @xmldom/xmldom). Pure: no database, no HTTP; the SSO module keeps request ids, RelayState, the
 * replay store and the keys, and calls these. README "SAML library" says why this stack.
 */
export { SamlError, isSamlError, type SamlErrorCode } from "./errors.js";
export { spMetadata, parseIdpMetadata, BINDINGS, METADATA_LIMITS, type SpMetadataOptions, type IdpMetadata, type SamlBinding } from "./metadata.js";
export { buildAuthnRequest, newMessageId, type AuthnRequestOptions, type AuthnRequest } from "./authn-request.js";
export { validateResponse, type ValidateResponseOptions, type SamlAssertionResult, type ReplayStore } from "./response.js";
export { buildLogoutRequest, buildLogoutResponse, validateLogoutRequest, validateLogoutResponse, type LogoutRequestOptions, type RedirectMessageOptions } from "./logout.js";
export { ALLOWED_ALGORITHMS } from "./signature.js";
export { MESSAGE_LIMITS } from "./xml.js";
