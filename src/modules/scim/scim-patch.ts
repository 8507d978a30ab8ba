import { matches, parseFilter, type AttributeCatalog } from "./scim-filter.js";
import { checkEmails, resolveUserPath, setAttr, type ScimUserState } from "./scim-user.js";
import { SCIM, ScimErrors } from "./scim.errors.js";

const MAX_OPERATIONS = 100;

export type Op = "add" | "replace" | "remove";

/**
 * A PatchOp (RFC 7644 §3.5.2) applied to a copy of the state: every operation or none (the caller
 * writes the result in one transaction). Accepts what real clients send: op names in any case
 * (Entra ID's "Replace"), a path-less operation whose value is an object of attributes (Okta's and
 * Entra ID's `{"active": false}`, keys possibly dotted or URN-prefixed), "True"/"False" strings.
 */
export function applyPatch(current: ScimUserState, body: unknown): ScimUserState {
  const state = { ...current };
  for (const o of readOperations(body)) {
    if (o.path) applyAt(state, o.op, o.path, o.value);
    else {
      if (o.op === "remove") throw ScimErrors.noTarget("remove needs a path");
      applyObject(state, o.op, o.value, "");
    }
  }
  return state;
}

export interface PatchOperation {
  op: Op;
  path: string | null;
  value: unknown;
}

/** The operations of a PatchOp body (RFC 7644 §3.5.2), checked for shape: op names in any case, a path if given. */
export function readOperations(body: unknown): PatchOperation[] {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw ScimErrors.invalidSyntax("The body must be a JSON object");
  const b = body as Record<string, unknown>;
  if (!Array.isArray(b.schemas) || !b.schemas.some((s) => typeof s === "string" && s.toLowerCase() === SCIM.patchOp.toLowerCase())) throw ScimErrors.invalidSyntax(`schemas must include ${SCIM.patchOp}`);
  const opsKey = Object.keys(b).find((k) => k.toLowerCase() === "operations");
  const ops = opsKey ? b[opsKey] : undefined;
  if (!Array.isArray(ops) || ops.length === 0) throw ScimErrors.invalidSyntax("Operations must be a non-empty array");
  if (ops.length > MAX_OPERATIONS) throw ScimErrors.invalidSyntax(`At most ${MAX_OPERATIONS} operations per request`);
  return ops.map((raw) => {
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw ScimErrors.invalidSyntax("Each operation must be an object");
    const o = raw as Record<string, unknown>;
    const op = typeof o.op === "string" ? o.op.toLowerCase() : "";
    if (op !== "add" && op !== "replace" && op !== "remove") throw ScimErrors.invalidSyntax(`Unknown op ${JSON.stringify(String(o.op).slice(0, 20))}: add, replace or remove`);
    if (o.path !== undefined && typeof o.path !== "string") throw ScimErrors.invalidPath("path must be a string");
    const path = typeof o.path === "string" && o.path.trim() ? o.path.trim() : null;
    return { op, path, value: o.value };
  });
}

/** A path-less add/replace: each key of the value is a path (an extension's block holds its own keys). */
function applyObject(state: ScimUserState, op: Op, value: unknown, prefix: string): void {
  if (!value || typeof value !== "object" || Array.isArray(value)) throw ScimErrors.invalidValue("An operation without a path needs an object value");
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (key.toLowerCase() === "schemas") continue;
    const isUrn = key.toLowerCase().startsWith("urn:");
    if (isUrn && v && typeof v === "object" && !Array.isArray(v)) {
      // The core and enterprise blocks hold attributes; another extension's block is the client's own (not stored, as on create).
      if ([SCIM.user, SCIM.enterpriseUser].some((u) => u.toLowerCase() === key.toLowerCase())) applyObject(state, op, v, `${key}:`);
      continue;
    }
    applyAt(state, op, `${prefix}${key}`, v);
  }
}

function applyAt(state: ScimUserState, op: Op, rawPath: string, value: unknown): void {
  const path = resolveUserPath(rawPath);
  if (path.kind === "ignored") return;
  if (path.kind === "emails") {
    // One address per account (the userName): a filter must name it to replace or remove it.
    const hit = matches(parseFilter(path.filter, EMAIL_CATALOG), { value: state.userName, type: "work", primary: true }, EMAIL_CATALOG);
    if (op === "remove") {
      if (!hit) throw ScimErrors.noTarget(`No email matches ${path.filter.slice(0, 100)}`);
      throw ScimErrors.mutability("The account's address (its userName) cannot be removed");
    }
    if (path.sub === "value" || path.sub === null) checkEmails(path.sub === "value" ? { value } : value);
    if (op === "replace" && !hit) throw ScimErrors.noTarget(`No email matches ${path.filter.slice(0, 100)}`);
    return;
  }
  if (op === "remove") {
    if (path.attr === "userName") throw ScimErrors.mutability("userName cannot be removed");
    if (path.attr === "active") throw ScimErrors.mutability("active cannot be removed: replace it with false");
    if (path.attr === "emails") throw ScimErrors.mutability("The account's address (its userName) cannot be removed");
    setAttr(state, path.attr, null, false);
    return;
  }
  // add and replace of a complex attribute merge the sub-attributes given (RFC 7644 §3.5.2.1/3).
  setAttr(state, path.attr, value, true);
}

/** What an emails value filter may name: the sub-attributes of one element. */
const EMAIL_CATALOG: AttributeCatalog = { paths: ["value", "type", "primary"], schemas: [], caseExact: [] };
