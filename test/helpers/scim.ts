import { sql } from "drizzle-orm";
import { resultRows } from "../../src/infra/db.js";
import { newApiKey } from "../factories/api-keys.js";
import { newOrg } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";
import type { TestApp } from "./app.js";
import type { HttpResponse } from "./http.js";

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const ENTERPRISE_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";

let seq = 0;

/** A SCIM client of one organization: its key, and requests as Okta or Entra ID make them (SCIM JSON). */
export interface ScimClient {
  orgId: string;
  owner: TestUser;
  key: string;
  keyId: string;
  domain: string;
  at(local: string): string;
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResponse>;
  get(path: string): Promise<HttpResponse>;
  post(path: string, body: unknown): Promise<HttpResponse>;
  put(path: string, body: unknown): Promise<HttpResponse>;
  patch(path: string, body: unknown): Promise<HttpResponse>;
  delete(path: string): Promise<HttpResponse>;
}

/** Marks a domain verified for the organization (the DNS check itself is the domains suite's). */
export async function verifyDomain(app: TestApp, orgId: string, domain: string): Promise<void> {
  await app.container.db.execute(
    sql`insert into organization_domains (organization_id, domain, verification_token, status, verified_at) values (${orgId}, ${domain}, ${`tok-${domain}`}, 'verified', now())`,
  );
}

/** An organization with a verified domain and an API key holding the scim scope, created through the API. */
export async function scimClient(app: TestApp, scopes: string[] = ["scim"]): Promise<ScimClient> {
  const owner = await newUser(app, { fullName: "SCIM Owner" });
  const org = await newOrg(app, owner);
  const domain = `scim-${Date.now().toString(36)}${seq++}.test`;
  await verifyDomain(app, org.id, domain);
  const key = await newApiKey(app, org.id, owner, { name: "provisioning", scopes });
  return clientFor(app, { orgId: org.id, owner, key: key.key, keyId: key.id, domain });
}

export function clientFor(app: TestApp, c: { orgId: string; owner: TestUser; key: string; keyId: string; domain: string }): ScimClient {
  const request = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    app.http.request(method, `/scim/v2${path}`, { token: c.key, ...(body === undefined ? {} : { body }), headers: { "content-type": "application/scim+json", ...headers } });
  return {
    ...c,
    at: (local) => `${local}@${c.domain}`,
    request,
    get: (path) => request("GET", path),
    post: (path, body) => request("POST", path, body),
    put: (path, body) => request("PUT", path, body),
    patch: (path, body) => request("PATCH", path, body),
    delete: (path) => request("DELETE", path),
  };
}

export const newScimUser = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER_SCHEMA],
  userName,
  name: { givenName: "Given", familyName: "Family" },
  emails: [{ primary: true, value: userName, type: "work" }],
  active: true,
  ...extra,
});

export const patchOf = (...Operations: unknown[]) => ({ schemas: [PATCH_SCHEMA], Operations });

export const eqFilter = (attr: string, value: string) => `?filter=${encodeURIComponent(`${attr} eq "${value}"`)}`;

/** The account row behind a SCIM User, straight from the database. */
export async function accountRow(app: TestApp, userId: string) {
  const [row] = resultRows<{ email: string; full_name: string | null; status: string; managed_by_organization_id: string | null; deleted_at: Date | null }>(
    await app.container.db.execute(sql`select email, full_name, status, managed_by_organization_id, deleted_at from users where id = ${userId}`),
  );
  return row;
}

export async function membershipOf(app: TestApp, orgId: string, userId: string) {
  const [row] = resultRows<{ role: string }>(
    await app.container.db.execute(sql`select role from org_memberships where organization_id = ${orgId} and user_id = ${userId} and deleted_at is null`),
  );
  return row;
}

export async function scimAudit(app: TestApp, orgId: string) {
  return resultRows<{ action: string; success: boolean; metadata: Record<string, unknown> | null }>(
    await app.container.db.execute(sql`select action, success, metadata from audit_logs where organization_id = ${orgId} and action like 'scim.%' order by created_at, id`),
  );
}

/** Asserts the SCIM error schema and returns [status, scimType]. */
export function scimError(res: HttpResponse): [number, string | undefined] {
  if (!res.body || !Array.isArray(res.body.schemas) || res.body.schemas[0] !== ERROR_SCHEMA || res.body.status !== String(res.status)) {
    throw new Error(`not a SCIM error: ${res.status} ${res.text}`);
  }
  return [res.status, res.body.scimType];
}
