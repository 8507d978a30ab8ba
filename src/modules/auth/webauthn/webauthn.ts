import type { AuthenticationResponseJSON, AuthenticatorTransport, RegistrationResponseJSON } from "@simplewebauthn/server";

/**
 * The only importer of @simplewebauthn/server (ARCHITECTURE rule 9): ceremony options and verification.
 * The library (with its ASN.1 and COSE parsers, about 5 MB of heap) loads with the first ceremony.
 */
let library: Promise<typeof import("@simplewebauthn/server")> | undefined;
const simplewebauthn = () => (library ??= import("@simplewebauthn/server"));

export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

export interface StoredCredential {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
}

export interface VerifiedRegistration {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  deviceType: string;
  backedUp: boolean;
  aaguid: string;
}

export class WebAuthnError extends Error {
  override name = "WebAuthnError";
}

export async function registrationOptions(rp: RelyingParty, user: { id: string; email: string; displayName: string }, exclude: StoredCredential[]) {
  const { generateRegistrationOptions } = await simplewebauthn();
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.displayName,
    userID: new TextEncoder().encode(user.id),
    attestationType: "none",
    excludeCredentials: exclude.map((c) => ({ id: c.credentialId, transports: c.transports as AuthenticatorTransport[] })),
    authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
    timeout: 60_000,
  });
}

/** What every ceremony's response must match: the challenge we issued, one of our origins, our RP ID. */
const expected = (rp: RelyingParty, expectedChallenge: string) => ({ expectedChallenge, expectedOrigin: rp.origins, expectedRPID: rp.id, requireUserVerification: false });

/** The library throws on a malformed or mismatched response: the service sees one error type. */
async function verifying<T>(verify: () => Promise<T>): Promise<T> {
  try {
    return await verify();
  } catch (e) {
    throw new WebAuthnError((e as Error).message);
  }
}

export async function verifyRegistration(rp: RelyingParty, response: unknown, expectedChallenge: string): Promise<VerifiedRegistration> {
  const { verifyRegistrationResponse } = await simplewebauthn();
  const result = await verifying(() => verifyRegistrationResponse({ response: response as RegistrationResponseJSON, ...expected(rp, expectedChallenge) }));
  if (!result.verified || !result.registrationInfo) throw new WebAuthnError("registration could not be verified");
  const info = result.registrationInfo;
  return {
    credentialId: info.credential.id,
    publicKey: Buffer.from(info.credential.publicKey).toString("base64url"),
    counter: info.credential.counter,
    transports: info.credential.transports ?? [],
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
    aaguid: info.aaguid,
  };
}

/** Options for an assertion: usernameless (no allow list) for passkey sign-in, or the user's credentials. */
export async function authenticationOptions(rp: RelyingParty, allow?: StoredCredential[]) {
  const { generateAuthenticationOptions } = await simplewebauthn();
  return generateAuthenticationOptions({
    rpID: rp.id,
    userVerification: "preferred",
    allowCredentials: allow?.map((c) => ({ id: c.credentialId, transports: c.transports as AuthenticatorTransport[] })),
    timeout: 60_000,
  });
}

/** The credential id and user handle an assertion claims (to find the stored credential first). */
export function assertionIdentity(response: unknown): { credentialId: string; userHandle: string | null } {
  const r = response as Partial<AuthenticationResponseJSON> | null;
  if (!r || typeof r.id !== "string" || !r.response || typeof r.response !== "object") throw new WebAuthnError("not a WebAuthn assertion");
  const handle = r.response.userHandle ? Buffer.from(r.response.userHandle, "base64url").toString("utf8") : null;
  return { credentialId: r.id, userHandle: handle };
}

/** Verifies an assertion; a counter that did not move forward is refused (cloned authenticator). */
export async function verifyAuthentication(rp: RelyingParty, response: unknown, expectedChallenge: string, credential: StoredCredential): Promise<{ newCounter: number }> {
  const stored = {
    id: credential.credentialId,
    publicKey: Buffer.from(credential.publicKey, "base64url"),
    counter: credential.counter,
    transports: credential.transports as AuthenticatorTransport[],
  };
  const { verifyAuthenticationResponse } = await simplewebauthn();
  const result = await verifying(() =>
    verifyAuthenticationResponse({ response: response as AuthenticationResponseJSON, credential: stored, ...expected(rp, expectedChallenge) }),
  );
  if (!result.verified) throw new WebAuthnError("assertion could not be verified");
  return { newCounter: result.authenticationInfo.newCounter };
}
