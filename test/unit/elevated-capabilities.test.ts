import { describe, expect, it } from "vitest";
import { AppError } from "../../src/lib/errors.js";
import { CAPABILITIES, checkOrgAccess, STORED_ROLE_ONLY, type ActiveMembership, type Capability, type OrgRole } from "../../src/modules/access/index.js";

/**
 * Every capability of the organization matrix, for a member elevated to admin by a role grant
 * (issue 37) while it is in force and after its end: what an admin may do, except what a temporary
 * role never confers (STORED_ROLE_ONLY, 403 ELEVATED_ROLE_FORBIDS); after the end, a member's.
 */
const actor = { kind: "user" as const, userId: "u1", email: "m@example.com", isSuperadmin: false, sessionId: null };
const until = new Date("2030-01-01T12:00:00Z");
const membership = (role: OrgRole, storedRole: OrgRole, elevatedUntil: Date | null): ActiveMembership => ({
  membershipId: "m1",
  organizationId: "o1",
  organizationName: "Org",
  organizationSlug: "org",
  joinedAt: new Date(0),
  role,
  storedRole,
  elevatedUntil,
});

function answer(m: ActiveMembership, capability: Capability): string {
  try {
    checkOrgAccess(actor, "o1", m, false, capability);
    return "allowed";
  } catch (e) {
    if (e instanceof AppError) return e.code;
    throw e;
  }
}

const all = Object.keys(CAPABILITIES) as Capability[];

describe("capabilities of a temporary admin", () => {
  it("while the grant is in force: an admin's, less STORED_ROLE_ONLY; never an owner's", () => {
    const elevated = membership("admin", "member", until);
    const got = Object.fromEntries(all.map((c) => [c, answer(elevated, c)]));
    const expected = Object.fromEntries(
      all.map((c) => [c, CAPABILITIES[c] === "owner" ? "AUTHORIZATION_ERROR" : STORED_ROLE_ONLY.has(c) ? "ELEVATED_ROLE_FORBIDS" : "allowed"]),
    );
    expect(got).toEqual(expected);
    // The list the docs give (docs/access-requests.md "What a temporary admin may not do").
    expect([...STORED_ROLE_ONLY].filter((c) => CAPABILITIES[c] === "admin").sort()).toEqual(
      ["api_keys.manage", "clients.manage", "domains.manage", "invites.manage", "members.manage", "sso.manage", "users.admin"].sort(),
    );
  });

  it("after the grant's end: a member's again", () => {
    const after = membership("member", "member", null);
    for (const c of all) expect([c, answer(after, c)]).toEqual([c, CAPABILITIES[c] === "guest" || CAPABILITIES[c] === "member" ? "allowed" : "AUTHORIZATION_ERROR"]);
  });

  it("an admin by the stored role keeps every admin capability", () => {
    const admin = membership("admin", "admin", null);
    for (const c of all) expect([c, answer(admin, c)]).toEqual([c, CAPABILITIES[c] === "owner" ? "AUTHORIZATION_ERROR" : "allowed"]);
  });
});
