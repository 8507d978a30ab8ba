import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cheapPasswordHasher, startTestApp, type TestApp } from "../../helpers/app.js";
import { addManagedMember, addMember, newOrg } from "../../factories/orgs.js";
import { newSuperadmin, newUser, type TestUser } from "../../factories/users.js";

/**
 * The admin-reach matrix (ARCHITECTURE rule 16, docs/accounts.md): every action on
 * another person's credentials or standing, by every caller relation, on every kind of target, in
 * both doors. Sharing an organization grants nothing; managing it does, below one's own role.
 *
 * Each case needs fresh targets (an allowed action changes one: a new password ends its sessions, a
 * deletion is undone), 64 in all, each signed up, activated and signed in, and most of the file's
 * time went to them and to argon2 at production cost, which nothing here is about: the app hashes
 * cheaply, and a case's four targets, once made, are called side by side.
 */
let app: TestApp;
let root: TestUser;

type Caller = "self" | "plainMemberOfManaging" | "adminOfManaging" | "ownerOfManaging" | "adminOfOtherSharedOrg" | "superadmin";
type Target = "selfRegistered" | "managedMember" | "managedAdmin" | "managedSuperadmin";
type Outcome = "allowed" | "self" | "not_found" | "forbidden";

interface Action {
  name: string;
  /** A read allows oneself; credential and standing actions send oneself to account settings. */
  read?: boolean;
  superadminOnly?: boolean;
  rest(targetId: string, token: string): Promise<{ status: number; code?: string }>;
  gql(targetId: string, token: string): Promise<{ status: number; code?: string }>;
  /** Puts the target back as it was, as an operator would. */
  undo?(targetId: string): Promise<void>;
}

const rest = async (method: string, path: string, token: string, body?: unknown) => {
  const res = await app.http.request(method, path, { token, ...(body === undefined ? {} : { body }) });
  return { status: res.status, code: res.body?.error?.type as string | undefined };
};
const gql = async (query: string, variables: Record<string, unknown>, token: string) => {
  const res = await app.http.gql(query, variables, { token });
  const error = res.errors?.[0];
  return { status: error ? Number(error.extensions.status) : 200, code: error?.extensions.code as string | undefined };
};

const ACTIONS: Action[] = [
  {
    name: "read the account",
    read: true,
    rest: (u, t) => rest("GET", `/api/v1/admin/users/${u}`, t),
    gql: (u, t) => gql("query($u: ID!) { adminUser(userId: $u) { id } }", { u }, t),
  },
  {
    name: "read its MFA methods",
    read: true,
    rest: (u, t) => rest("GET", `/api/v1/admin/users/${u}/mfa`, t),
    gql: (u, t) => gql("query($u: ID!) { userMfaMethods(userId: $u) { totpEnabled } }", { u }, t),
  },
  {
    name: "set its password",
    rest: (u, t) => rest("POST", `/api/v1/admin/users/${u}/password`, t, { password: "chosen by someone else" }),
    gql: (u, t) => gql('mutation($u: ID!) { setUserPassword(userId: $u, password: "chosen by someone else") { message } }', { u }, t),
  },
  {
    name: "remove its MFA",
    rest: (u, t) => rest("DELETE", `/api/v1/admin/users/${u}/mfa/all`, t),
    gql: (u, t) => gql('mutation($u: ID!) { removeUserMfa(userId: $u, method: "all") { message } }', { u }, t),
  },
  {
    name: "unlink a provider",
    rest: (u, t) => rest("DELETE", `/api/v1/admin/users/${u}/linked-accounts/github`, t),
    gql: (u, t) => gql('mutation($u: ID!) { adminUnlinkExternalAccount(userId: $u, provider: "github") }', { u }, t),
  },
  {
    name: "suspend it",
    rest: (u, t) => rest("POST", `/api/v1/admin/users/${u}/suspend`, t, {}),
    gql: (u, t) => gql("mutation($u: ID!) { suspendUser(userId: $u) { id } }", { u }, t),
    undo: async (u) => void (await rest("POST", `/api/v1/admin/users/${u}/unsuspend`, root.token, {})),
  },
  {
    name: "delete it",
    rest: (u, t) => rest("POST", `/api/v1/admin/users/${u}/delete`, t, { confirm: true }),
    gql: (u, t) => gql("mutation($u: ID!) { deleteUser(userId: $u, confirm: true) { message } }", { u }, t),
    undo: async (u) => void (await rest("POST", `/api/v1/admin/users/${u}/restore`, root.token, {})),
  },
  {
    name: "mark its address verified",
    superadminOnly: true,
    rest: (u, t) => rest("POST", `/api/v1/admin/users/${u}/verify-email`, t, {}),
    gql: (u, t) => gql("mutation($u: ID!) { verifyUserEmail(userId: $u) { id } }", { u }, t),
  },
];

/** The rule, as a table: what each caller may do to each kind of target. */
function expected(action: Action, caller: Caller, target: Target): Outcome {
  if (caller === "self") {
    if (action.superadminOnly && target !== "managedSuperadmin") return "forbidden";
    return action.read ? "allowed" : "self";
  }
  if (action.superadminOnly) return caller === "superadmin" ? "allowed" : "forbidden";
  if (caller === "superadmin") return "allowed";
  if (target === "selfRegistered") return "not_found";
  if (caller === "adminOfManaging") return target === "managedMember" ? "allowed" : "forbidden";
  if (caller === "ownerOfManaging") return target === "managedSuperadmin" ? "forbidden" : "allowed";
  return "not_found";
}

function classify(res: { status: number; code?: string }): Outcome {
  if (res.code === "USER_NOT_FOUND") return "not_found";
  if (res.status === 403) return "forbidden";
  if (res.status === 400 && res.code === "BAD_REQUEST") return "self";
  // Past the reach check: done, or refused for a reason about the account itself (nothing linked).
  if (res.status < 300 || res.code === "NOT_LINKED") return "allowed";
  return `unexpected ${res.status} ${res.code}` as Outcome;
}

let callers: Record<Exclude<Caller, "self">, TestUser>;
let managingOrgId: string;
let otherOrgId: string;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" }, { passwordHasher: cheapPasswordHasher() });
  root = await newSuperadmin(app);
  const owner = await newUser(app, { fullName: "Managing Owner" });
  managingOrgId = (await newOrg(app, owner, "Managing Org")).id;
  const admin = await newUser(app, { fullName: "Managing Admin" });
  const plain = await newUser(app, { fullName: "Plain Member" });
  await addMember(app, managingOrgId, owner, admin, "admin");
  await addMember(app, managingOrgId, owner, plain, "member");
  const otherOwner = await newUser(app, { fullName: "Other Org Owner" });
  otherOrgId = (await newOrg(app, otherOwner, "Other Org")).id;
  const otherAdmin = await newUser(app, { fullName: "Other Org Admin" });
  await addMember(app, otherOrgId, otherOwner, otherAdmin, "admin");
  callers = { plainMemberOfManaging: plain, adminOfManaging: admin, ownerOfManaging: owner, adminOfOtherSharedOrg: otherAdmin, superadmin: root };
}, 120_000);
afterAll(() => app?.close());

/** A fresh target of a kind: every target shares the managing organization and the other one with the callers. */
async function newTarget(kind: Target): Promise<TestUser> {
  const owner = callers.ownerOfManaging;
  let user: TestUser;
  if (kind === "selfRegistered") {
    user = await newUser(app);
    await addMember(app, managingOrgId, owner, user, "member");
  } else {
    user = await addManagedMember(app, managingOrgId, owner, kind === "managedAdmin" ? "admin" : "member");
    if (kind === "managedSuperadmin") await app.services.operators.setSuperadmin({ actor: { kind: "anonymous" }, requestId: "test", ip: null, userAgent: null }, user.email, true);
  }
  await addMember(app, otherOrgId, callers.adminOfOtherSharedOrg, user, "member");
  return user;
}

const TARGETS: Target[] = ["selfRegistered", "managedMember", "managedAdmin", "managedSuperadmin"];
const CALLERS: Caller[] = ["self", "plainMemberOfManaging", "adminOfOtherSharedOrg", "adminOfManaging", "ownerOfManaging", "superadmin"];

describe.each(["rest", "gql"] as const)("admin reach through %s", (door) => {
  it.each(ACTIONS.map((a) => [a.name, a] as const))("%s: only superadmins and the managing organization's admins above the account's role", async (_name, action) => {
    const mismatches: string[] = [];
    // Made one after another (a factory reads its own email from a shared outbox run), then the
    // four separate accounts are called side by side, each kind's callers in order.
    const targets: TestUser[] = [];
    for (const kind of TARGETS) targets.push(await newTarget(kind));
    await Promise.all(
      TARGETS.map(async (kind, i) => {
        const target = targets[i]!;
        // Oneself first: some actions end the target's sessions.
        for (const caller of CALLERS) {
          const token = caller === "self" ? target.token : callers[caller].token;
          const got = classify(await action[door](target.id, token));
          const want = expected(action, caller, kind);
          if (got !== want) mismatches.push(`${caller} → ${kind}: got ${got}, expected ${want}`);
          if (got === "allowed" && action.undo) await action.undo(target.id);
        }
      }),
    );
    expect(mismatches.sort()).toEqual([]);
  }, 120_000);
});
