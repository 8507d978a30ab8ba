import { certificateFacts, type CertificateFacts } from "../../lib/crypto/index.js";
import { type IdpMetadata, isSamlError, parseIdpMetadata } from "../../lib/saml/index.js";
import type { SamlConnectionConfig } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { parseId } from "../../lib/validation.js";
import { ssoConnectionsRepository, type ConnectionRow } from "./sso-connections.repository.js";
import { issuerProblem } from "./oidc-connection.client.js";
import { SsoErrors } from "./sso.errors.js";

export const samlConfigOf = (row: Pick<ConnectionRow, "config">): SamlConnectionConfig => row.config as unknown as SamlConnectionConfig;

/** An enabled SAML connection by the id in its SP addresses; any other (unknown, disabled, OpenID Connect) is not available. */
export async function enabledSamlConnection(db: Executor, connectionId: string): Promise<ConnectionRow> {
  const id = parseId(connectionId, SsoErrors.notAvailable);
  const connection = await ssoConnectionsRepository.findById(db, id);
  if (!connection?.enabled || connection.kind !== "saml") throw SsoErrors.notAvailable();
  return connection;
}

/** The SP's addresses of one connection; the metadata URL is also its entityID. */
export function spUrls(publicUrl: string, connectionId: string): { entityId: string; metadataUrl: string; acsUrl: string; sloUrl: string } {
  const at = (p: string) => new URL(`/sso/saml/${connectionId}/${p}`, publicUrl).toString();
  return { entityId: at("metadata"), metadataUrl: at("metadata"), acsUrl: at("acs"), sloUrl: at("slo") };
}

/** The IdP certificates a response may be signed with now: the current ones and those still in their rollover overlap. */
export function pinnedCerts(c: SamlConnectionConfig, now: Date): string[] {
  return [...c.idpCertsPem, ...c.previousCertsPem.filter((p) => Date.parse(p.until) > now.getTime()).map((p) => p.pem)];
}

/** How long a certificate the IdP's metadata stopped listing is still accepted. */
export const ROLLOVER_OVERLAP_MS = 7 * 24 * 3600 * 1000;

/** A new certificate list from re-read metadata; dropped certificates stay pinned for the overlap window. */
export function rolledOver(c: SamlConnectionConfig, fresh: string[], now: Date): Pick<SamlConnectionConfig, "idpCertsPem" | "previousCertsPem"> {
  const until = new Date(now.getTime() + ROLLOVER_OVERLAP_MS).toISOString();
  const dropped = c.idpCertsPem.filter((p) => !fresh.includes(p)).map((pem) => ({ pem, until }));
  const kept = c.previousCertsPem.filter((p) => Date.parse(p.until) > now.getTime() && !fresh.includes(p.pem) && !dropped.some((d) => d.pem === p.pem));
  return { idpCertsPem: fresh, previousCertsPem: [...kept, ...dropped] };
}

const MAX_METADATA = 512 * 1024;

/** Reads an IdP's metadata document from its URL (https, or http on loopback), bounded in time and size. */
export async function fetchIdpMetadata(url: string): Promise<IdpMetadata> {
  const problem = issuerProblem(url);
  if (problem) throw SsoErrors.metadataInvalid("the metadata URL must be https (http only on loopback)");
  let text: string;
  try {
    const res = await fetch(url, { redirect: "error", signal: AbortSignal.timeout(10_000), headers: { accept: "application/samlmetadata+xml, application/xml, text/xml" } });
    if (!res.ok) throw SsoErrors.metadataInvalid(`the metadata URL answered ${res.status}`);
    const body = await res.arrayBuffer();
    if (body.byteLength > MAX_METADATA) throw SsoErrors.metadataInvalid("the metadata is above 512 KiB");
    text = Buffer.from(body).toString("utf8");
  } catch (e) {
    if (e instanceof Error && "code" in e && e.code === "SSO_METADATA_INVALID") throw e;
    throw SsoErrors.metadataInvalid("the metadata URL could not be read");
  }
  return parseMetadata(text);
}

export function parseMetadata(xml: string): IdpMetadata {
  try {
    return parseIdpMetadata(xml);
  } catch (e) {
    if (isSamlError(e)) throw SsoErrors.metadataInvalid(e.message);
    throw e;
  }
}

/** The IdP part of a connection's settings from its metadata. */
export function fromMetadata(m: IdpMetadata): Pick<SamlConnectionConfig, "idpEntityId" | "idpSsoUrl" | "idpSsoBinding" | "idpSsoPostUrl" | "idpSloUrl" | "idpCertsPem"> {
  const binding = m.ssoUrls.redirect ? "redirect" : "post";
  return {
    idpEntityId: m.entityId,
    idpSsoUrl: (m.ssoUrls.redirect ?? m.ssoUrls.post)!,
    idpSsoBinding: binding,
    idpSsoPostUrl: m.ssoUrls.post ?? null,
    idpSloUrl: m.sloBinding === "redirect" ? (m.sloUrl ?? null) : null,
    idpCertsPem: m.signingCertsPem,
  };
}

/**
 * Where and how an AuthnRequest goes: HTTP-Redirect by default; HTTP-POST when the IdP offers only
 * that, or when the connection prefers POST and the IdP offers it (a connection given by hand: its
 * one SSO URL).
 */
export function authnRequestTarget(c: SamlConnectionConfig): { url: string; binding: "redirect" | "post" } {
  if (c.idpSsoBinding === "post") return { url: c.idpSsoUrl, binding: "post" };
  if (!c.preferPostBinding) return { url: c.idpSsoUrl, binding: "redirect" };
  const post = c.metadataUrl || c.idpSsoPostUrl !== undefined ? c.idpSsoPostUrl : c.idpSsoUrl;
  return post ? { url: post, binding: "post" } : { url: c.idpSsoUrl, binding: "redirect" };
}

/** The SAML part of an admin's view of a connection (the SP's private keys never leave the server). */
export interface SamlConnectionView {
  spEntityId: string;
  spMetadataUrl: string;
  acsUrl: string;
  sloUrl: string;
  idpEntityId: string;
  idpSsoUrl: string;
  idpSloUrl: string | null;
  idpMetadataUrl: string | null;
  metadataFetchedAt: string | null;
  idpCertificateCount: number;
  /** The pinned IdP signing certificates: the current ones, then those kept for the rollover overlap. */
  idpCertificates: IdpCertificateView[];
  allowIdpInitiated: boolean;
  signAuthnRequests: boolean;
  preferPostBinding: boolean;
  /** How AuthnRequests go to this IdP now (see authnRequestTarget). */
  authnRequestBinding: "redirect" | "post";
  wantEncryptedAssertions: boolean;
  spSigningCertificate: string;
  spEncryptionCertificate: string;
  emailAttribute: string | null;
  nameAttribute: string;
  groupsAttribute: string;
}

/** What an admin compares with the IdP's console about one pinned signing certificate (public facts only). */
export interface IdpCertificateView extends CertificateFacts {
  /** The IdP's metadata no longer lists it: it is only kept until overlapEndsAt (ROLLOVER_OVERLAP_MS). */
  inRolloverOverlap: boolean;
  overlapEndsAt: Date | null;
}

const withOverlap = (pem: string, overlapEndsAt: Date | null): IdpCertificateView => ({ ...certificateFacts(pem), inRolloverOverlap: overlapEndsAt !== null, overlapEndsAt });

/** The certificates pinnedCerts accepts at `now`, each with its facts. */
export function idpCertificateViews(c: SamlConnectionConfig, now: Date): IdpCertificateView[] {
  return [
    ...c.idpCertsPem.map((pem) => withOverlap(pem, null)),
    ...c.previousCertsPem.filter((p) => Date.parse(p.until) > now.getTime() && !c.idpCertsPem.includes(p.pem)).map((p) => withOverlap(p.pem, new Date(p.until))),
  ];
}

export function samlView(r: ConnectionRow, publicUrl: string, now: Date): SamlConnectionView {
  const c = samlConfigOf(r);
  const sp = spUrls(publicUrl, r.id);
  return {
    spEntityId: sp.entityId,
    spMetadataUrl: sp.metadataUrl,
    acsUrl: sp.acsUrl,
    sloUrl: sp.sloUrl,
    idpEntityId: c.idpEntityId,
    idpSsoUrl: c.idpSsoUrl,
    idpSloUrl: c.idpSloUrl,
    idpMetadataUrl: c.metadataUrl,
    metadataFetchedAt: c.metadataFetchedAt,
    idpCertificateCount: c.idpCertsPem.length,
    idpCertificates: idpCertificateViews(c, now),
    allowIdpInitiated: c.allowIdpInitiated,
    signAuthnRequests: c.signAuthnRequests,
    preferPostBinding: c.preferPostBinding ?? false,
    authnRequestBinding: authnRequestTarget(c).binding,
    wantEncryptedAssertions: c.wantEncryptedAssertions,
    spSigningCertificate: c.spSigningCertPem,
    spEncryptionCertificate: c.spEncryptionCertPem,
    emailAttribute: c.attributes.email,
    nameAttribute: c.attributes.name,
    groupsAttribute: c.attributes.groups,
  };
}
