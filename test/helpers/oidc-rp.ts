import * as oc from "openid-client";
import type { RegisteredClient } from "../factories/oidc.js";

/** openid-client pointed at a test Keyward (plain http on loopback). */
export function discover(baseUrl: string, client: RegisteredClient): Promise<oc.Configuration> {
  const auth = client.clientSecret ? oc.ClientSecretBasic(client.clientSecret) : oc.None();
  return oc.discovery(new URL(baseUrl), client.clientId, client.clientSecret ?? undefined, auth, { execute: [oc.allowInsecureRequests] });
}

/** The OAuth error code a relying-party call failed with. */
export async function oauthError(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    const err = e as { error?: string; cause?: unknown };
    // A 401 with WWW-Authenticate comes as a list of challenges carrying the error parameter.
    if (Array.isArray(err.cause)) return (err.cause[0] as { parameters: { error: string } }).parameters.error;
    return err.error ?? String(e);
  }
  throw new Error("expected the call to fail");
}
