import type { Config } from "../../src/config/index.js";
import type { Services } from "../../src/container.js";
import { setSessionCookie } from "../../src/http/session.js";
import { createOrgSchema, deleteOrgSchema, transferSchema, updateOrgSchema, addMemberSchema, changeRoleSchema, inviteSchema, acceptInviteSchema, type InviteView } from "../../src/modules/orgs/index.js";
import { z } from "zod";
import { sendData, sendList } from "../envelope.js";
import { input, param, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

const O = "/organizations/:orgId";

/** What removing a member answers: the offboarding receipt's id (null when you removed yourself, which is leaving). */
const removedMemberView = z.object({ receiptId: z.string().nullable().describe("The offboarding receipt (GET …/offboardings/{receipt_id}); null when you left") });

/** An invitation with the inviter's id also under the original API's name, for its scripts. */
const withInviterId = (i: InviteView) => ({ ...i, invitedById: i.invitedBy });

export const orgsRoutes = (s: Services, config: Config): RouteDef[] => [
  {
    method: "post", path: "/organizations", errors: { 403: "Your address is not verified yet (EMAIL_NOT_VERIFIED), or you already belong to MAX_ORGS_PER_USER organizations (ORG_LIMIT_REACHED)", 409: "The slug is taken (SLUG_TAKEN)" }, data: data.organization, tag: "organizations", auth: "user", body: createOrgSchema, status: 201,
    summary: "Create an organization (you become its owner; at most MAX_ORGS_PER_USER memberships)",
    handle: async (req, res) => sendData(res, 201, "Organization created", { organization: await s.orgs.create(req.ctx, input(req)) }),
  },
  {
    method: "get", path: "/organizations", data: data.organizations, tag: "organizations", auth: "user", scope: "orgs:read", summary: "Your organizations",
    handle: async (req, res) => sendList(res, 200, "Organizations", "organizations", await s.orgs.listMine(req.ctx)),
  },
  {
    method: "get", path: O, data: data.organizationWithCount, tag: "organizations", auth: "user", scope: "orgs:read", org: "guest", summary: "An organization and its member count",
    handle: async (req, res) => {
      const { memberCount, ...organization } = await s.orgs.get(req.ctx, param(req, "orgId"));
      sendData(res, 200, "Organization", { organization, memberCount });
    },
  },
  {
    method: "patch", path: O, data: data.organization, tag: "organizations", auth: "user", org: "admin", body: updateOrgSchema, summary: "Change name, description or logo",
    handle: async (req, res) => sendData(res, 200, "Organization updated", { organization: await s.orgs.update(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "delete", path: O, data: null, tag: "organizations", auth: "user", org: "owner", body: deleteOrgSchema,
    summary: "Delete the organization (owners; {confirm: true} when it has other members)",
    handle: async (req, res) => {
      await s.orgs.delete(req.ctx, param(req, "orgId"), input(req));
      sendData(res, 200, "Organization deleted");
    },
  },
  {
    method: "post", path: `${O}/transfer-ownership`, errors: { 409: "The new owner is you, or already an owner (CONFLICT)" }, tag: "organizations", auth: "user", org: "owner", body: transferSchema,
    summary: "Make another member the owner; you become an admin",
    handle: async (req, res) => sendData(res, 200, "Ownership transferred", await s.orgs.transferOwnership(req.ctx, param(req, "orgId"), input(req))),
  },
  {
    method: "get", path: `${O}/members`, data: data.members, tag: "members", auth: "user", org: "guest", apiKey: "members:read", summary: "Members and their roles",
    handle: async (req, res) => sendList(res, 200, "Members", "members", await s.members.list(req.ctx, param(req, "orgId"))),
  },
  {
    method: "post", path: `${O}/members`, errors: { 409: "Already a member, or an invitation is pending (ALREADY_MEMBER, INVITE_PENDING)" }, data: data.invite, tag: "members", auth: "user", org: "admin", body: addMemberSchema, status: 201,
    summary: "Add a person by email: an existing account is invited (it joins when it accepts); an address without one is invited to create an account this organization manages. The answer is the same either way",
    handle: async (req, res) => sendData(res, 201, "Invitation sent: they become a member when they accept it", { invite: withInviterId(await s.invites.addMember(req.ctx, param(req, "orgId"), input(req))) }),
  },
  {
    method: "delete", path: `${O}/members/:userId`, data: removedMemberView, tag: "members", auth: "user", org: "admin",
    summary: "Remove a member (never the last owner: transfer ownership first). Removing someone else is offboarding: the answer names its receipt (GET …/offboardings/{receipt_id})",
    handle: async (req, res) => sendData(res, 200, "Member removed", await s.members.remove(req.ctx, param(req, "orgId"), param(req, "userId"))),
  },
  {
    method: "patch", path: `${O}/members/:userId/role`, data: data.member, tag: "members", auth: "user", org: "admin", body: changeRoleSchema,
    summary: "Change a member's role (only owners grant or remove the owner role)",
    handle: async (req, res) => sendData(res, 200, "Role changed", { member: await s.members.changeRole(req.ctx, param(req, "orgId"), param(req, "userId"), input(req)) }),
  },
  {
    method: "post", path: `${O}/leave`, data: null, tag: "members", auth: "user", org: "guest", summary: "Leave the organization (not as its last owner)",
    handle: async (req, res) => {
      await s.members.leave(req.ctx, param(req, "orgId"));
      sendData(res, 200, "You left the organization");
    },
  },
  {
    method: "get", path: `${O}/invites`, data: data.invites, tag: "invites", auth: "user", org: "admin", summary: "Open invitations",
    handle: async (req, res) => sendList(res, 200, "Invites", "invites", (await s.invites.list(req.ctx, param(req, "orgId"))).map(withInviterId)),
  },
  {
    method: "post", path: `${O}/invites`, errors: { 409: "Already a member, or an invitation is pending (ALREADY_MEMBER, INVITE_PENDING)" }, data: data.invite, tag: "invites", auth: "user", org: "admin", body: inviteSchema, status: 201,
    summary: "Invite an address (emailed, single-use link valid 7 days)",
    handle: async (req, res) => sendData(res, 201, "Invite sent", { invite: withInviterId(await s.invites.send(req.ctx, param(req, "orgId"), input(req))) }),
  },
  {
    method: "post", path: `${O}/invites/:inviteId/resend`, data: data.invite, tag: "invites", auth: "user", org: "admin",
    summary: "Send an open invitation again: a new link (the old one stops working), valid 7 days",
    handle: async (req, res) => sendData(res, 200, "Invite sent again", { invite: withInviterId(await s.invites.resend(req.ctx, param(req, "orgId"), param(req, "inviteId"))) }),
  },
  {
    method: "delete", path: `${O}/invites/:inviteId`, data: null, tag: "invites", auth: "user", org: "admin", summary: "Cancel an invitation",
    handle: async (req, res) => {
      await s.invites.cancel(req.ctx, param(req, "orgId"), param(req, "inviteId"));
      sendData(res, 200, "Invite cancelled");
    },
  },
  {
    method: "get", path: "/invites/:token", errors: { 400: "The link is invalid, used or expired (INVALID_LINK)" }, tag: "invites", auth: "none", summary: "What an invitation link is for",
    handle: async (req, res) => sendData(res, 200, "Invite", await s.invites.lookup(req.ctx, param(req, "token"))),
  },
  {
    method: "post", path: "/invites/:token/accept", errors: { 400: "The link is invalid, used or expired (INVALID_LINK)", 409: "The invitation was used, or the address already has an account (INVITE_ALREADY_USED, ACCOUNT_EXISTS)" }, tag: "invites", auth: "optional", body: acceptInviteSchema,
    summary: "Accept an invitation: signed in with the invited address, or registering it (full_name, password)",
    handle: async (req, res) => {
      const { session, ...result } = await s.invites.accept(req.ctx, param(req, "token"), input(req));
      // The account was created here: a browser is signed in as with /auth/login (a browser session, not remembered).
      if (session) setSessionCookie(res, config, session.token, null);
      sendData(res, 200, "Invitation accepted", { ...result, ...(session ? { token: session.token, expiresAt: session.expiresAt } : {}) });
    },
  },
  {
    method: "get", path: "/users/me/invites", tag: "invites", auth: "user", summary: "Invitations waiting for your verified address",
    handle: async (req, res) => sendList(res, 200, "Invites", "invites", await s.invites.listMine(req.ctx)),
  },
  {
    method: "post", path: "/users/me/invites/:inviteId/accept", errors: { 409: "Already a member, or the invitation was used (ALREADY_MEMBER, INVITE_ALREADY_USED)" }, tag: "invites", auth: "user", summary: "Accept one of your invitations",
    handle: async (req, res) => sendData(res, 200, "Invitation accepted", await s.invites.acceptMine(req.ctx, param(req, "inviteId"))),
  },
  {
    method: "post", path: "/users/me/invites/:inviteId/decline", data: null, tag: "invites", auth: "user", summary: "Decline one of your invitations (the organization may invite you again)",
    handle: async (req, res) => {
      await s.invites.declineMine(req.ctx, param(req, "inviteId"));
      sendData(res, 200, "Invitation declined");
    },
  },
  {
    method: "get", path: "/users/me/organizations", data: data.organizations, tag: "users", auth: "user", scope: "orgs:read", summary: "Your organizations with your role",
    handle: async (req, res) => sendList(res, 200, "Organizations", "organizations", await s.orgs.listMine(req.ctx)),
  },
  {
    method: "get", path: "/users/me/organizations/simple", data: data.simpleOrganizations, tag: "users", auth: "user", scope: "orgs:read", summary: "Your organizations as {id, name, slug, role} (for the CLI)",
    handle: async (req, res) => sendList(res, 200, "Organizations", "organizations", await s.orgs.listMineSimple(req.ctx)),
  },
  {
    method: "get", path: "/users/me/memberships", tag: "users", auth: "user", scope: "orgs:read", summary: "Per organization: your role, departments and principals",
    handle: async (req, res) => sendData(res, 200, "Memberships", { orgs: await s.myDirectory.memberships(req.ctx) }),
  },
  {
    method: "get", path: "/users/me/principals", tag: "users", auth: "user", summary: "Per organization: your principals (and all of them for admins)",
    handle: async (req, res) => sendData(res, 200, "Principals", { orgs: await s.myDirectory.principals(req.ctx) }),
  },
];
