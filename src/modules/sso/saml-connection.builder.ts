import type { z } from "zod";
import { generateSelfSignedRsa, type SecretBox, sealContexts } from "../../lib/crypto/index.js";
import { CommonErrors } from "../../lib/errors.js";
import type { SamlConnectionConfig } from "../../../schema/index.js";
import { fetchIdpMetadata, fromMetadata, parseMetadata } from "./saml-config.js";
import type { createSamlConnectionSchema, samlSettingsSchema } from "./sso.schemas.js";
import { SsoErrors } from "./sso.errors.js";

/** The SP's private keys of a connection, sealed together as JSON in `secret_sealed`. */
export interface SamlSpKeys {
  signingKeyPem: string;
  encryptionKeyPem: string;
}

/** Opens a connection's sealed SP keys, as its secrets repository read them (null: the connection is gone). */
export function openSamlSpKeys(box: SecretBox, sealed: string | null, connectionId: string): SamlSpKeys {
  if (!sealed) throw SsoErrors.notAvailable();
  return JSON.parse(box.decryptString(sealed, sealContexts.ssoConnectionSecret(connectionId))) as SamlSpKeys;
}

const pemOf = (c: string): string => {
  const t = c.trim();
  if (t.startsWith("-----BEGIN")) return `${t}\n`;
  const body = t.replace(/\s+/g, "");
  return `-----BEGIN CERTIFICATE-----\n${body.replace(/.{64}/g, "$&\n").replace(/\n$/, "")}\n-----END CERTIFICATE-----\n`;
};

/**
 * A new SAML connection's settings: the IdP from its metadata (URL or document) or given by hand,
 * and a fresh SP signing key and encryption key with their self-signed certificates.
 */
export async function buildSamlConnection(data: z.output<typeof createSamlConnectionSchema>, connectionId: string, now: Date): Promise<{ config: SamlConnectionConfig; keys: SamlSpKeys }> {
  const sources = [data.metadataUrl, data.metadataXml, data.idpSsoUrl ?? data.idpEntityId ?? data.idpCertificates].filter((v) => v !== undefined).length;
  if (sources !== 1) throw CommonErrors.validation([{ path: "metadataUrl", message: "give the IdP by metadataUrl, by metadataXml, or by idpEntityId + idpSsoUrl + idpCertificates (one of the three)" }]);
  let idp: ReturnType<typeof fromMetadata>;
  if (data.metadataUrl) idp = fromMetadata(await fetchIdpMetadata(data.metadataUrl));
  else if (data.metadataXml) idp = fromMetadata(parseMetadata(data.metadataXml));
  else {
    if (!data.idpEntityId || !data.idpSsoUrl || !data.idpCertificates?.length) {
      throw CommonErrors.validation([{ path: "idpEntityId", message: "idpEntityId, idpSsoUrl and idpCertificates are all needed without metadata" }]);
    }
    idp = { idpEntityId: data.idpEntityId, idpSsoUrl: data.idpSsoUrl, idpSsoBinding: "redirect", idpSsoPostUrl: data.idpSsoUrl, idpSloUrl: data.idpSloUrl ?? null, idpCertsPem: data.idpCertificates.map(pemOf) };
  }
  const signing = generateSelfSignedRsa(`keyward-saml-sp-signing-${connectionId}`, now);
  const encryption = generateSelfSignedRsa(`keyward-saml-sp-encryption-${connectionId}`, now);
  const config: SamlConnectionConfig = {
    ...idp,
    previousCertsPem: [],
    metadataUrl: data.metadataUrl ?? null,
    metadataFetchedAt: data.metadataUrl ? now.toISOString() : null,
    ...switchesOf(data),
    spSigningCertPem: signing.certPem,
    spEncryptionCertPem: encryption.certPem,
    attributes: { email: data.emailAttribute === null ? null : (data.emailAttribute ?? "email"), name: data.nameAttribute ?? "name", groups: data.groupsAttribute ?? "groups" },
  };
  return { config, keys: { signingKeyPem: signing.keyPem, encryptionKeyPem: encryption.keyPem } };
}

/** A new connection's on/off settings, with their defaults. */
function switchesOf(data: z.output<typeof samlSettingsSchema>): Pick<SamlConnectionConfig, "allowIdpInitiated" | "signAuthnRequests" | "preferPostBinding" | "wantEncryptedAssertions"> {
  return {
    allowIdpInitiated: data.allowIdpInitiated ?? false,
    signAuthnRequests: data.signAuthnRequests ?? true,
    preferPostBinding: data.preferPostBinding ?? false,
    wantEncryptedAssertions: data.wantEncryptedAssertions ?? true,
  };
}

/** The SAML settings an update changes. */
export function samlChanges(before: SamlConnectionConfig, data: z.output<typeof samlSettingsSchema>): SamlConnectionConfig {
  return {
    ...before,
    allowIdpInitiated: data.allowIdpInitiated ?? before.allowIdpInitiated,
    signAuthnRequests: data.signAuthnRequests ?? before.signAuthnRequests,
    preferPostBinding: data.preferPostBinding ?? before.preferPostBinding ?? false,
    wantEncryptedAssertions: data.wantEncryptedAssertions ?? before.wantEncryptedAssertions,
    attributes: {
      email: data.emailAttribute === undefined ? before.attributes.email : data.emailAttribute,
      name: data.nameAttribute ?? before.attributes.name,
      groups: data.groupsAttribute ?? before.attributes.groups,
    },
  };
}
