import { AppError } from "../../lib/errors.js";

export const CaErrors = {
  notFound: () => new AppError("CA_NOT_FOUND", 404, "Certificate authority not found"),
  duplicateType: (type: string) =>
    new AppError("DUPLICATE_CA_TYPE", 400, `This organization already has an active ${type} CA: rotate its key or delete it first`),
  noSigningOrganization: () => new AppError("NOT_FOUND", 404, "You are not a member (or above) of any organization, so no certificate policy applies to you"),
  // A state a person fixes (an admin creates the CA), not an outage: a 4xx that says how, so it
  // never pages the on-call (the shipped alert fires on 5xx).
  notConfiguredFor: (type: "user" | "host", org: { id: string; name: string; slug: string }) =>
    new AppError(
      "CA_NOT_CONFIGURED",
      404,
      `${org.name} has no active ${type} certificate authority yet. An owner or admin creates one on its SSH page in the web app (/orgs/${org.slug}/ssh), ` +
        `or with POST /api/v1/organizations/${org.id}/cas {"name": "…"${type === "host" ? ', "ca_type": "host"' : ""}}; then ask again.`,
      { organization_id: org.id, ca_type: type },
    ),
  /** No organization the caller may act in has a CA of this type (no org_id given). */
  noneConfigured: (type: "user" | "host") =>
    new AppError(
      "CA_NOT_CONFIGURED",
      404,
      `None of the organizations you can use has an active ${type} certificate authority yet. An owner or admin creates one on the organization's SSH page in the web app (/orgs/<slug>/ssh), ` +
        `or with POST /api/v1/organizations/<org id>/cas {"name": "…"${type === "host" ? ', "ca_type": "host"' : ""}}; then ask again.`,
      { ca_type: type },
    ),
  ambiguous: (orgs: Array<{ id: string; name: string }>) =>
    new AppError(
      "MULTIPLE_ORGS_AMBIGUOUS",
      400,
      `You belong to several organizations that can sign certificates (${orgs.map((o) => o.name).join(", ")}): choose one with org_id (CLI: --org-id; --list-orgs lists them)`,
      { organizations: orgs },
    ),
  hostPatterns: (problems: string[]) =>
    new AppError("VALIDATION_ERROR", 400, `Host patterns: ${problems.join("; ")}`, { errors: problems.map((message) => ({ path: "hostPatterns", message })) }),
  hostPatternsOnUserCa: () =>
    new AppError("VALIDATION_ERROR", 400, "Host patterns belong to a host CA: a user CA vouches for people, not hosts", { errors: [{ path: "hostPatterns", message: "only a host CA has host patterns" }] }),
  /** An enrolled host's organization has no host CA (a 4xx: an admin fixes it, then the host tries again). */
  hostCaMissing: (organizationId: string) =>
    new AppError(
      "CA_NOT_CONFIGURED",
      404,
      'The organization has no active host certificate authority: an owner or admin creates one (POST /api/v1/organizations/{id}/cas with "ca_type": "host"), then the host tries again',
      { organization_id: organizationId, ca_type: "host" },
    ),
  wrongCaType: () => new AppError("WRONG_CA_TYPE", 400, "That certificate authority signs the other kind of certificate"),
  invalidValidity: (message: string) => new AppError("VALIDATION_ERROR", 400, message, { errors: [{ path: "maxCertValidityHours", message }] }),
  noPrincipals: () => new AppError("NO_PRINCIPALS", 400, "You hold no principals in this organization: ask an admin to grant you one"),
  unauthorizedPrincipals: (names: string[]) =>
    new AppError("UNAUTHORIZED_PRINCIPALS", 403, `You may not request these principals: ${names.join(", ")}`, { principals: names }),
  expiryNotAllowed: () => new AppError("EXPIRY_NOT_ALLOWED", 400, "Your department policy does not let you choose the certificate lifetime"),
  expiryTooLong: (max: number) =>
    new AppError("EXPIRY_TOO_LONG", 400, `The requested lifetime exceeds the maximum of ${max} hours set by your department policy`, { max_expiry_hours: max }),
  keyNotVerified: () =>
    new AppError("KEY_NOT_VERIFIED", 400, "Prove you hold this key first: GET /api/v1/ssh/keys/{id}/verify, sign the challenge, POST the signature"),
  noVerifiedKeys: () => new AppError("NO_VERIFIED_KEYS", 400, "You have no verified SSH key: add one and prove you hold it"),
  /** The department certificate policy refuses this key (its type, or the flags of its proof). */
  hardwareKeyRequired: (department: string, requirement: "hardware_key" | "touch" | "verify", keyType: string, unproved = false) =>
    new AppError(
      "HARDWARE_KEY_REQUIRED",
      403,
      requirement === "hardware_key"
        ? `The department "${department}" requires a hardware-backed security key, and this is a ${keyType} key: create one with \`ssh-keygen -t ed25519-sk\` (or -t ecdsa-sk), add it (keyward keys add), prove you hold it, and sign with it`
        : unproved
          ? `The department "${department}" requires a security key whose proof of possession shows ${requirement === "touch" ? "a touch" : "a PIN or biometric check"}: prove you hold this key first (GET /api/v1/ssh/keys/{id}/verify, sign the challenge with it, POST the signature)`
          : requirement === "touch"
            ? `The department "${department}" requires a security key that asks for a touch, and this key's proof of possession showed none (was it made with -O no-touch-required?): use a key made without it, and prove it again`
            : `The department "${department}" requires a security key that checks a PIN or biometric, and this key's proof of possession did not: create one with \`ssh-keygen -t ed25519-sk -O verify-required\`, add it and prove you hold it`,
      { department, requirement, key_type: keyType },
    ),
  certNotFound: () => new AppError("SSH_CERT_NOT_FOUND", 404, "Certificate not found"),
  alreadyRevoked: () => new AppError("ALREADY_REVOKED", 409, "The certificate is already revoked"),
  signingFailed: () => new AppError("SIGNING_FAILED", 500, "The certificate could not be signed"),
};
