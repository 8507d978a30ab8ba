import { normalizeEmail } from "../../lib/strings.js";
import type { AttributeCatalog } from "./scim-filter.js";
import { resolvePath } from "./scim-filter.js";
import { SCIM, ScimErrors } from "./scim.errors.js";

/** What Keyward keeps of a SCIM User: the account's address and name, and the client's own fields. */
export interface ScimUserState {
  userName: string;
  externalId: string | null;
  givenName: string | null;
  familyName: string | null;
  /** name.formatted: the account's full name. */
  formatted: string | null;
  displayName: string | null;
  active: boolean;
  /** The enterprise extension's department: the name of the organization's department the person is put in. */
  department: string | null;
  /** The enterprise extension's manager: the SCIM id (account id) of another User of the organization. */
  manager: string | null;
}

export interface ScimUserRecord extends ScimUserState {
  /** The manager's name as answered (its displayName), when the manager is a User of the organization. */
  managerDisplayName: string | null;
  id: string;
  created: Date;
  lastModified: Date;
  /** The weak ETag's opaque part. */
  version: string;
}

/** Attributes filters and PATCH paths may name (canonical spelling). */
export const USER_CATALOG: AttributeCatalog = {
  paths: [
    "id", "externalId", "userName", "displayName", "active",
    "name", "name.givenName", "name.familyName", "name.formatted",
    "emails", "emails.value", "emails.type", "emails.primary",
    "meta.created", "meta.lastModified",
  ],
  schemas: [SCIM.user],
  caseExact: ["id", "externalId"],
};

/**
 * Attributes of the core and enterprise User schemas that clients send by default (Entra ID maps
 * title, phone numbers, addresses and the enterprise attributes out of the box) and Keyward does
 * not keep: accepted and not stored (RFC 7644 §3.3 lets a service provider ignore them), so a
 * default attribute mapping works. Anything outside both schemas is refused.
 */
const IGNORED_CORE = new Set(
  ["nickName", "profileUrl", "title", "userType", "preferredLanguage", "locale", "timezone", "password", "phoneNumbers", "ims", "photos", "addresses", "entitlements", "roles", "x509Certificates", "name.middleName", "name.honorificPrefix", "name.honorificSuffix"].map((s) => s.toLowerCase()),
);
const ENTERPRISE_IGNORED = new Set(["employeeNumber", "costCenter", "organization", "division", "manager.displayName", "manager.$ref"].map((s) => s.toLowerCase()));
const READ_ONLY = new Set(["id", "meta", "groups", "schemas"]);

export type UserPath =
  | { kind: "attr"; attr: "userName" | "externalId" | "displayName" | "active" | "name" | "name.givenName" | "name.familyName" | "name.formatted" | "emails" | "department" | "manager" }
  /** `emails[<filter>]` or `emails[<filter>].<sub>`. */
  | { kind: "emails"; filter: string; sub: string | null }
  | { kind: "ignored" };

/** Resolves a PATCH path (or a no-path value's key) on a User, or throws invalidPath / mutability. */
export function resolveUserPath(raw: string): UserPath {
  if (raw.length > 512) throw ScimErrors.invalidPath("The path is too long");
  const lower = raw.toLowerCase();
  if (lower.startsWith(`${SCIM.enterpriseUser.toLowerCase()}:`)) return resolveEnterprisePath(raw);
  const bracket = /^(.*?)\[(.*)\](?:\.([A-Za-z]+))?$/s.exec(raw);
  if (bracket) {
    const base = resolvePath(USER_CATALOG, bracket[1]!);
    if (base !== "emails") {
      if (IGNORED_CORE.has(stripCore(bracket[1]!).toLowerCase())) return { kind: "ignored" };
      throw ScimErrors.invalidPath(`Value filters apply to emails only, not ${JSON.stringify(bracket[1]!.slice(0, 100))}`);
    }
    const sub = bracket[3] ? resolvePath(USER_CATALOG, bracket[3], "emails") : null;
    if (bracket[3] && !sub) throw ScimErrors.invalidPath(`No sub-attribute ${JSON.stringify(bracket[3])} of emails`);
    return { kind: "emails", filter: bracket[2]!, sub: sub ? sub.slice("emails.".length) : null };
  }
  const plain = stripCore(raw);
  const head = plain.split(".")[0]!;
  if (READ_ONLY.has(head)) throw ScimErrors.mutability(`${head} is read-only`);
  if (IGNORED_CORE.has(plain.toLowerCase()) || IGNORED_CORE.has(head.toLowerCase())) return { kind: "ignored" };
  const path = resolvePath(USER_CATALOG, raw);
  if (!path || path.startsWith("meta") || path === "id") throw ScimErrors.invalidPath(`No attribute ${JSON.stringify(raw.slice(0, 100))} on a User`);
  if (path.startsWith("emails.")) return { kind: "attr", attr: "emails" };
  return { kind: "attr", attr: path as Extract<UserPath, { kind: "attr" }>["attr"] };
}

/** A path in the enterprise extension: Entra ID names them `…:User:department`, `…:User:manager` (a bare id), Okta `…:User:manager.value`. */
function resolveEnterprisePath(raw: string): UserPath {
  const rest = raw.toLowerCase().slice(SCIM.enterpriseUser.length + 1);
  if (rest === "department") return { kind: "attr", attr: "department" };
  if (rest === "manager" || rest === "manager.value") return { kind: "attr", attr: "manager" };
  if (ENTERPRISE_IGNORED.has(rest)) return { kind: "ignored" };
  throw ScimErrors.invalidPath(`No attribute ${JSON.stringify(raw.slice(0, 100))} in the enterprise User schema`);
}

const stripCore = (raw: string): string => (raw.toLowerCase().startsWith(`${SCIM.user.toLowerCase()}:`) ? raw.slice(SCIM.user.length + 1) : raw);

// ---- values ------------------------------------------------------------------------------------

/** A string attribute: null clears it; at most 255 characters. */
export function optionalString(value: unknown, attr: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== "string") throw ScimErrors.invalidValue(`${attr} must be a string`);
  const v = value.trim();
  if (v.length > 255) throw ScimErrors.invalidValue(`${attr} is longer than 255 characters`);
  return v === "" ? null : v;
}

/** `active`: a boolean, or the strings "True"/"False" Entra ID sends (any case). */
export function booleanValue(value: unknown, attr: string): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "string" && /^(true|false)$/i.test(value)) return value.toLowerCase() === "true";
  throw ScimErrors.invalidValue(`${attr} must be true or false`);
}

const EMAIL = /^[^\s@"<>()[\]\\,;:]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** userName is the account's address (Keyward accounts are addresses). */
export function userNameValue(value: unknown): string {
  if (typeof value !== "string" || !value.trim()) throw ScimErrors.invalidValue("userName is required and must be a string");
  const v = value.trim();
  if (v.length > 320 || !EMAIL.test(v)) throw ScimErrors.invalidValue("userName must be an email address (Keyward accounts are addresses)");
  return normalizeEmail(v);
}

function nameValue(state: ScimUserState, value: unknown, merge: boolean): void {
  if (value === null) {
    state.givenName = state.familyName = state.formatted = null;
    return;
  }
  if (typeof value !== "object" || Array.isArray(value)) throw ScimErrors.invalidValue("name must be an object");
  const o = value as Record<string, unknown>;
  const pick = (key: string) => Object.keys(o).find((k) => k.toLowerCase() === key.toLowerCase());
  for (const [key, attr] of [["givenName", "givenName"], ["familyName", "familyName"], ["formatted", "formatted"]] as const) {
    const k = pick(key);
    if (k !== undefined) state[attr] = optionalString(o[k], `name.${key}`);
    else if (!merge) state[attr] = null;
  }
}

/** Applies one attribute's value (a resource's key, a PATCH path) to the state. */
export function setAttr(state: ScimUserState, attr: Extract<UserPath, { kind: "attr" }>["attr"], value: unknown, merge: boolean): void {
  switch (attr) {
    case "userName": state.userName = userNameValue(value); return;
    case "externalId": state.externalId = optionalString(value, "externalId"); return;
    case "displayName": state.displayName = optionalString(value, "displayName"); return;
    case "active": state.active = booleanValue(value, "active"); return;
    case "name": nameValue(state, value, merge); return;
    case "name.givenName": state.givenName = optionalString(value, "name.givenName"); return;
    case "name.familyName": state.familyName = optionalString(value, "name.familyName"); return;
    case "name.formatted": state.formatted = optionalString(value, "name.formatted"); return;
    case "emails": checkEmails(value); return;
    case "department": state.department = optionalString(value, "department"); return;
    case "manager": state.manager = managerValue(value); return;
  }
}

/**
 * The enterprise `manager`: `{"value": "<id>"}` (RFC 7643 §4.3, Okta), or the bare id Entra ID
 * sends; null or "" clears it. Whether the id is a User of the organization is the service's check.
 */
export function managerValue(value: unknown): string | null {
  let v = value;
  if (v && typeof v === "object" && !Array.isArray(v)) {
    const key = Object.keys(v).find((k) => k.toLowerCase() === "value");
    v = key === undefined ? null : (v as Record<string, unknown>)[key];
  }
  if (v === null || v === undefined) return null;
  if (typeof v !== "string") throw ScimErrors.invalidValue("manager must be a User's id, or an object with one as its value");
  const id = v.trim();
  if (!id) return null;
  if (id.length > 64) throw ScimErrors.invalidValue("manager: not a User of this organization");
  return id;
}

/**
 * Keyward keeps one address per account, the userName: `emails` is answered from it. Emails sent
 * are checked for shape and not stored (a directory's `mail` may differ from its user name).
 */
export function checkEmails(value: unknown): void {
  const list = Array.isArray(value) ? value : [value];
  if (list.length > 20) throw ScimErrors.invalidValue("Too many emails");
  for (const e of list) {
    if (typeof e === "string") continue;
    if (!e || typeof e !== "object" || ("value" in e && typeof (e as { value: unknown }).value !== "string")) throw ScimErrors.invalidValue("emails must be objects with a string value");
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The schemas of a User body: the core User URN must be there (extensions may be). */
export function checkUserSchemas(body: unknown): asserts body is Record<string, unknown> {
  if (!isObject(body)) throw ScimErrors.invalidSyntax("The body must be a JSON object");
  const schemas = body.schemas;
  if (!Array.isArray(schemas) || !schemas.every((s) => typeof s === "string")) throw ScimErrors.invalidSyntax("schemas must be an array of schema URNs");
  if (!schemas.some((s) => (s as string).toLowerCase() === SCIM.user.toLowerCase())) throw ScimErrors.invalidSyntax(`schemas must include ${SCIM.user}`);
}

/** A whole User as POST and PUT send it: what is not given is cleared (but `active` stays as it was when absent). */
export function stateFromResource(body: unknown, previous: ScimUserState | null): ScimUserState {
  checkUserSchemas(body);
  const state: ScimUserState = { userName: "", externalId: null, givenName: null, familyName: null, formatted: null, displayName: null, active: previous?.active ?? true, department: null, manager: null };
  let sawUserName = false;
  for (const [key, value] of Object.entries(body)) {
    const k = key.toLowerCase();
    if (k === "schemas" || READ_ONLY.has(key) || k === "meta" || k === "id" || k === "groups") continue;
    // Extension blocks: the enterprise one's department and manager are kept; other extensions are the client's own.
    if (k === SCIM.enterpriseUser.toLowerCase()) {
      if (value === null) continue;
      if (!isObject(value)) throw ScimErrors.invalidSyntax(`${SCIM.enterpriseUser} must be an object`);
      for (const [ek, ev] of Object.entries(value)) {
        const path = resolveUserPath(`${SCIM.enterpriseUser}:${ek}`);
        if (path.kind === "attr") setAttr(state, path.attr, ev, false);
      }
      continue;
    }
    if (k.startsWith("urn:")) continue;
    const path = resolveUserPath(key);
    if (path.kind === "ignored") continue;
    if (path.kind !== "attr") throw ScimErrors.invalidSyntax(`${key} is not an attribute`);
    if (path.attr === "userName") sawUserName = true;
    setAttr(state, path.attr, value, false);
  }
  if (!sawUserName) throw ScimErrors.invalidValue("userName is required");
  return state;
}

/** The User as answered (RFC 7643 §4.1), before attributes/excludedAttributes. */
export function toUserResource(u: ScimUserRecord, baseUrl: string): Record<string, unknown> {
  const name: Record<string, string> = {};
  if (u.givenName) name.givenName = u.givenName;
  if (u.familyName) name.familyName = u.familyName;
  if (u.formatted) name.formatted = u.formatted;
  const enterprise: Record<string, unknown> = {};
  if (u.department) enterprise.department = u.department;
  if (u.manager) enterprise.manager = { value: u.manager, $ref: `${baseUrl}/Users/${u.manager}`, ...(u.managerDisplayName ? { displayName: u.managerDisplayName } : {}) };
  const extended = Object.keys(enterprise).length > 0;
  return {
    schemas: extended ? [SCIM.user, SCIM.enterpriseUser] : [SCIM.user],
    id: u.id,
    ...(u.externalId ? { externalId: u.externalId } : {}),
    userName: u.userName,
    ...(Object.keys(name).length ? { name } : {}),
    displayName: u.displayName ?? u.formatted ?? u.userName,
    emails: [{ value: u.userName, type: "work", primary: true }],
    active: u.active,
    ...(extended ? { [SCIM.enterpriseUser]: enterprise } : {}),
    meta: { resourceType: "User", created: u.created.toISOString(), lastModified: u.lastModified.toISOString(), location: `${baseUrl}/Users/${u.id}`, version: etagOf(u) },
  };
}

export const etagOf = (u: Pick<ScimUserRecord, "version">): string => `W/"${u.version}"`;

/**
 * attributes / excludedAttributes (RFC 7644 §3.4.2.5): top-level and sub-attribute names, any
 * case, URN-prefixed or not. `schemas` and `id` are always returned.
 */
export function project(resource: Record<string, unknown>, attributes: string[] | null, excluded: string[] | null): Record<string, unknown> {
  const norm = (list: string[]) => list.map((a) => stripCore(a.trim()).toLowerCase()).filter(Boolean);
  if (attributes?.length) {
    const wanted = norm(attributes);
    const out: Record<string, unknown> = { schemas: resource.schemas, id: resource.id };
    for (const [key, value] of Object.entries(resource)) {
      const k = key.toLowerCase();
      if (wanted.includes(k)) out[key] = value;
      else if (isObject(value)) {
        const subs = wanted.filter((w) => w.startsWith(`${k}.`)).map((w) => w.slice(k.length + 1));
        const picked = Object.fromEntries(Object.entries(value).filter(([s]) => subs.includes(s.toLowerCase())));
        if (Object.keys(picked).length) out[key] = picked;
      }
    }
    return out;
  }
  if (excluded?.length) {
    const drop = norm(excluded);
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(resource)) {
      const k = key.toLowerCase();
      if (drop.includes(k) && k !== "id" && k !== "schemas") continue;
      if (isObject(value) && drop.some((d) => d.startsWith(`${k}.`))) {
        out[key] = Object.fromEntries(Object.entries(value).filter(([s]) => !drop.includes(`${k}.${s.toLowerCase()}`)));
      } else out[key] = value;
    }
    return out;
  }
  return resource;
}
