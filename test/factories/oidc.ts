import type { TestApp } from "../helpers/app.js";
import type { TestUser } from "./users.js";

export const REDIRECT = "http://127.0.0.1:47999/cb";
export const POST_LOGOUT = "http://127.0.0.1:47999/signed-out";

export interface RegisteredClient {
  clientId: string;
  clientSecret: string | null;
}

/** Registers a client through the REST API as an organization admin. */
export async function registerClient(app: TestApp, orgId: string, admin: TestUser, input: Record<string, unknown> = {}): Promise<RegisteredClient> {
  const res = await app.http.post(
    `/api/v1/organizations/${orgId}/clients`,
    { name: "Test RP", redirect_uris: [REDIRECT], post_logout_redirect_uris: [POST_LOGOUT], ...input },
    { token: admin.token },
  );
  if (res.status !== 201) throw new Error(`register client failed: ${res.status} ${res.text}`);
  return { clientId: res.body.data.client.client_id, clientSecret: res.body.data.client.client_secret };
}
