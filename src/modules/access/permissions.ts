import type { ApiKeyScope } from "../../lib/api-key-scopes.js";

/**
 * The organization permission matrix: the one table services consult. A role has a capability
 * when it is at or above the capability's minimum role (owner > admin > member > guest).
 *
 * | capability            | owner | admin | member | guest |
 * |-----------------------|:-----:|:-----:|:------:|:-----:|
 * | org.read              |   ✓   |   ✓   |   ✓    |   ✓   |
 * | members.read          |   ✓   |   ✓   |   ✓    |   ✓   |
 * | departments.read      |   ✓   |   ✓   |   ✓    |   ✓   |
 * | principals.read       |   ✓   |   ✓   |   ✓    |   ✓   |
 * | ssh.sign              |   ✓   |   ✓   |   ✓    |       |
 * | networks.use          |   ✓   |   ✓   |   ✓    |       |
 * | org.update            |   ✓   |   ✓   |        |       |
 * | members.manage        |   ✓   |   ✓   |        |       |
 * | invites.manage        |   ✓   |   ✓   |        |       |
 * | departments.manage    |   ✓   |   ✓   |        |       |
 * | principals.manage     |   ✓   |   ✓   |        |       |
 * | cert_policy.read      |   ✓   |   ✓   |        |       |
 * | cert_policy.manage    |   ✓   |   ✓   |        |       |
 * | api_keys.manage       |   ✓   |   ✓   |        |       |
 * | activity.read         |   ✓   |   ✓   |        |       |
 * | users.admin           |   ✓   |   ✓   |        |       |
 * | ca.manage             |   ✓   |   ✓   |        |       |
 * | clients.manage        |   ✓   |   ✓   |        |       |
 * | networks.manage       |   ✓   |   ✓   |        |       |
 * | domains.manage        |   ✓   |   ✓   |        |       |
 * | sso.manage            |   ✓   |   ✓   |        |       |
 * | org.delete            |   ✓   |       |        |       |
 * | org.transfer          |   ✓   |       |        |       |
 *
 * Guests read and nothing else. Admins manage everything but the organization's existence and
 * its owners: only an owner can grant or remove the owner role. `users.admin` reaches only the
 * accounts this organization manages (admin-reach.ts), never a member who joined as themselves.
 */
export const ROLES = ["owner", "admin", "member", "guest"] as const;
export type OrgRole = (typeof ROLES)[number];

export const CAPABILITIES = {
  "org.read": "guest",
  "members.read": "guest",
  "departments.read": "guest",
  "principals.read": "guest",
  "ssh.sign": "member",
  "networks.use": "member",
  "org.update": "admin",
  "members.manage": "admin",
  "invites.manage": "admin",
  "departments.manage": "admin",
  "principals.manage": "admin",
  "cert_policy.read": "admin",
  "cert_policy.manage": "admin",
  "api_keys.manage": "admin",
  "activity.read": "admin",
  "users.admin": "admin",
  "ca.manage": "admin",
  "clients.manage": "admin",
  "networks.manage": "admin",
  "domains.manage": "admin",
  "sso.manage": "admin",
  "org.delete": "owner",
  "org.transfer": "owner",
} as const satisfies Record<string, OrgRole>;

export type Capability = keyof typeof CAPABILITIES;

/**
 * What a role held only through a time-bounded role grant (issue 37, docs/access-requests.md)
 * never confers, whatever the role: the capabilities that would let it outlive the grant or
 * change who holds what. Each needs the role kept on the membership (the *stored* role):
 *
 * | capability       | why not while elevated                                                   |
 * |------------------|--------------------------------------------------------------------------|
 * | members.manage   | changing roles or memberships (a 2-hour admin making themselves a lasting one) |
 * | invites.manage   | an invitation creates a lasting membership, with a role                  |
 * | api_keys.manage  | organization API keys (and SCIM tokens) outlive the grant                |
 * | clients.manage   | OIDC clients and their secrets outlive the grant                          |
 * | sso.manage       | SSO connections decide who signs in (and SCIM/JIT provisioning)           |
 * | domains.manage   | verified domains decide who joins and is managed                          |
 * | users.admin      | passwords, MFA and suspension of managed accounts (admin reach)           |
 *
 * Deciding access requests and setting their policies is refused too (access-requests service:
 * approvers are counted by their stored role), and certificates signed while elevated end with
 * the elevation (signing service).
 */
export const STORED_ROLE_ONLY: ReadonlySet<Capability> = new Set<Capability>([
  "members.manage",
  "invites.manage",
  "api_keys.manage",
  "clients.manage",
  "sso.manage",
  "domains.manage",
  "users.admin",
  "org.delete",
  "org.transfer",
]);

const RANK: Record<OrgRole, number> = { owner: 3, admin: 2, member: 1, guest: 0 };

export const roleRank = (role: OrgRole): number => RANK[role];
export const roleAtLeast = (role: OrgRole, minimum: OrgRole): boolean => RANK[role] >= RANK[minimum];
export const can = (role: OrgRole, capability: Capability): boolean => roleAtLeast(role, CAPABILITIES[capability]);
export const isAdminRole = (role: OrgRole): boolean => roleAtLeast(role, "admin");

/**
 * What an organization API key's scopes grant, next to the roles' table: a key holds no role, only
 * these capabilities, and only in its own organization (org-access.ts). `ssh:sudo` grants no
 * capability here: the sudo check is an operation of keys alone (requireApiKey).
 *
 * | scope           | capabilities     |
 * |-----------------|------------------|
 * | ssh:sudo        |                  |
 * | members:read    | members.read     |
 * | principals:read | principals.read  |
 * | audit:read      | activity.read    |
 * | scim            |                  |
 *
 * `scim` grants no capability either: SCIM (/scim/v2) is its own door, for keys alone, and reaches
 * only the accounts the key's organization manages (src/modules/scim).
 */
export const API_KEY_SCOPE_CAPABILITIES = {
  "ssh:sudo": [],
  "members:read": ["members.read"],
  "principals:read": ["principals.read"],
  "audit:read": ["activity.read"],
  scim: [],
} as const satisfies Record<ApiKeyScope, readonly Capability[]>;

const grantsOf = (scope: ApiKeyScope): readonly Capability[] => API_KEY_SCOPE_CAPABILITIES[scope];

/** Whether a key with these scopes holds the capability. */
export const keyCan = (scopes: ReadonlySet<ApiKeyScope>, capability: Capability): boolean => [...scopes].some((s) => grantsOf(s).includes(capability));

/** The scope that grants a capability to keys, if one does (what a refusal names). */
export const scopeGranting = (capability: Capability): ApiKeyScope | undefined =>
  (Object.keys(API_KEY_SCOPE_CAPABILITIES) as ApiKeyScope[]).find((s) => grantsOf(s).includes(capability));
