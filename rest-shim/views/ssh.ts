import { API_KEY_SCOPE_NAMES } from "../../src/lib/api-key-scopes.js";
import { z } from "zod";
import type { Services } from "../../src/container.js";
import { date, type Item, named, type Returns, sameShape } from "./same-shape.js";

// --- SSH keys, certificates, certificate authorities ---
export const sshKeyView = named("SshKey", z.object({
  id: z.string(),
  userId: z.string(),
  fingerprint: z.string(),
  keyType: z.string().describe("ed25519, ecdsa, rsa, or a FIDO2 security key: sk-ed25519, sk-ecdsa"),
  hardwareBacked: z.boolean().describe("A FIDO2 security key (sk-): its private half never leaves the device"),
  skUserPresence: z.boolean().nullable().describe("A security key whose proof of possession showed a touch (user presence); null: not a security key, or not proved yet"),
  skUserVerification: z.boolean().nullable().describe("A security key whose proof of possession showed a PIN or biometric check (user verification); null as above"),
  keyBits: z.number().int(),
  keyComment: z.string().nullable(),
  description: z.string().nullable(),
  publicKey: z.string(),
  verified: z.boolean(),
  verifiedAt: date.nullable(),
  verifyTextCreatedAt: date.nullable(),
  createdAt: date,
  updatedAt: date,
}));
sameShape<z.output<typeof sshKeyView>, Returns<Services["sshKeys"]["get"]>>();

export const certificateView = named("Certificate", z.object({
  id: z.string(),
  organizationId: z.string(),
  caId: z.string(),
  userId: z.string().nullable(),
  sshKeyId: z.string().nullable(),
  certType: z.enum(["user", "host"]),
  serial: z.string().describe("A decimal string: serials are 64-bit"),
  keyId: z.string(),
  principals: z.array(z.string()),
  extensions: z.array(z.string()),
  validAfter: date,
  validBefore: date,
  publicKeyFingerprint: z.string(),
  certificate: z.string(),
  status: z.enum(["active", "expired", "revoked"]),
  revoked: z.boolean(),
  revokedAt: date.nullable(),
  revokeReason: z.string().nullable(),
  createdAt: date,
}));
sameShape<z.output<typeof certificateView>, Returns<Services["certificates"]["get"]>>();

export const signedCertificateView = named("SignedCertificate", certificateView.extend({ certId: z.string(), organizationName: z.string() }));
sameShape<z.output<typeof signedCertificateView>, Returns<Services["signing"]["signUserCertificate"]>>();

export const caView = named("CertificateAuthority", z.object({
  id: z.string(),
  organizationId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  caType: z.enum(["user", "host"]),
  defaultValidityHours: z.number().int(),
  maxValidityHours: z.number().int(),
  hostPatterns: z.array(z.string()).nullable().describe("A host CA's host patterns (null: not set, known_hosts says *)"),
  createdAt: date,
  updatedAt: date,
  keyType: z.string(),
  publicKey: z.string(),
  fingerprint: z.string(),
  previousKeys: z.array(z.object({ publicKey: z.string(), fingerprint: z.string(), trustedUntil: date.nullable() })),
}));
sameShape<z.output<typeof caView>, Item<Returns<Services["cas"]["list"]>>>();

export const sshClientConfigView = named("SshClientConfig", z.object({
  organizations: z.array(z.object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    hasUserCa: z.boolean().describe("Certificates can be signed in this organization"),
    hostCa: z.object({
      id: z.string(),
      name: z.string(),
      hostPatterns: z.array(z.string()).nullable().describe("The hosts the CA vouches for (null: not set)"),
      knownHosts: z.array(z.string()).describe("@cert-authority lines, one per trusted key"),
    }).nullable(),
  })),
}));
sameShape<z.output<typeof sshClientConfigView>, Returns<Services["cas"]["clientConfig"]>>();

// --- API keys ---
export const apiKeyView = named("ApiKey", z.object({
  id: z.string(),
  organizationId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  prefix: z.string(),
  scopes: z.array(z.string()).describe(`What the key may do (${API_KEY_SCOPE_NAMES.join(", ")})`),
  createdBy: z.string().nullable(),
  lastUsedAt: date.nullable(),
  revokedAt: date.nullable(),
  revokeReason: z.string().nullable(),
  createdAt: date,
  updatedAt: date,
}));
sameShape<z.output<typeof apiKeyView>, Item<Returns<Services["apiKeys"]["list"]>>>();
export const createdApiKeyView = named("CreatedApiKey", apiKeyView.extend({ key: z.string().describe("The secret, shown once") }));
sameShape<z.output<typeof createdApiKeyView>, Returns<Services["apiKeys"]["create"]>>();

