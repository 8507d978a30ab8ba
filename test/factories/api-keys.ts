import type { TestApp } from "../helpers/app.js";
import type { TestUser } from "./users.js";

/** Creates an organization API key through the API; `key` is the secret, shown this once. */
export async function newApiKey(app: TestApp, orgId: string, admin: TestUser, body: { name?: string; scopes?: string[] } = {}): Promise<{ id: string; key: string; prefix: string; scopes: string[] }> {
  const res = await app.http.post(`/api/v1/organizations/${orgId}/api-keys`, { name: "automation", ...body }, { token: admin.token });
  if (res.status !== 201) throw new Error(`create API key failed: ${res.status} ${res.text}`);
  const k = res.body.data.api_key;
  return { id: k.id, key: k.key, prefix: k.prefix, scopes: k.scopes };
}
