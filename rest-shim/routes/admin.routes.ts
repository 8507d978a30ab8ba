import { z } from "zod";
import type { Services } from "../../src/container.js";
import { adminDeleteSchema, adminPasswordSchema, adminUsersQuerySchema } from "../../src/modules/orgs/index.js";
import { auditQuerySchema, suspendSchema } from "../../src/modules/users/index.js";
import { Verbatim } from "../../src/lib/strings.js";
import { sendData } from "../envelope.js";
import { input, param, queryInput, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

const U = "/admin/users/:userId";

/** Acting on an account: never your own (BAD_REQUEST: use your account settings). */
export const onAnotherAccount = (r: RouteDef): RouteDef =>
  r.path.startsWith(U) ? { ...r, errors: { 400: "The account is your own: use your account settings (BAD_REQUEST)", ...r.errors } } : r;

/** Account administration: superadmins over everyone, org owners/admins over their members. */
export const adminRoutes = (s: Services): RouteDef[] =>
  ([
  {
    method: "get", path: "/admin/users", data: data.adminUsers, tag: "admin", auth: "user", query: adminUsersQuerySchema,
    summary: "Search the accounts you administer (?q=&page=&per_page=)",
    handle: async (req, res) => {
      const { items, ...page } = await s.adminUsers.search(req.ctx, queryInput(req));
      sendData(res, 200, "Users", { users: items, ...page });
    },
  },
  {
    method: "get", path: U, data: data.adminUser, tag: "admin", auth: "user", summary: "An account you administer, with its SSH public keys",
    handle: async (req, res) => sendData(res, 200, "User", await s.adminUsers.getWithSshKeys(req.ctx, param(req, "userId"))),
  },
  {
    method: "post", path: `${U}/suspend`, data: data.user, errors: { 409: "Already suspended (ALREADY_SUSPENDED)" }, tag: "admin", auth: "user", body: suspendSchema,
    summary: "Suspend an account: its sessions end at once, sign-in is refused, its owner is emailed",
    handle: async (req, res) => sendData(res, 200, "User suspended", { user: await s.adminUsers.suspend(req.ctx, param(req, "userId"), input(req)) }),
  },
  {
    method: "post", path: `${U}/unsuspend`, data: data.user, errors: { 409: "Not suspended (NOT_SUSPENDED)" }, tag: "admin", auth: "user", summary: "Lift a suspension",
    handle: async (req, res) => sendData(res, 200, "User unsuspended", { user: await s.adminUsers.unsuspend(req.ctx, param(req, "userId")) }),
  },
  {
    method: "post", path: `${U}/verify-email`, data: data.user, tag: "admin", auth: "user", summary: "Mark an account's address verified",
    handle: async (req, res) => sendData(res, 200, "Email verified", { user: await s.adminUsers.verifyEmail(req.ctx, param(req, "userId")) }),
  },
  {
    method: "post", path: `${U}/password`, data: null, tag: "admin", auth: "user", body: adminPasswordSchema, summary: "Set or reset an account's password (its sessions end)",
    handle: async (req, res) => {
      await s.adminUsers.setPassword(req.ctx, param(req, "userId"), input(req));
      sendData(res, 200, "Password set");
    },
  },
  {
    method: "post", path: `${U}/delete`, data: null, errors: { 409: "The account is the only owner of an organization with other members (USER_IS_SOLE_OWNER)" }, tag: "admin", auth: "user", body: adminDeleteSchema, summary: "Soft-delete an account ({confirm: true})",
    handle: async (req, res) => {
      await s.adminUsers.delete(req.ctx, param(req, "userId"), input(req));
      sendData(res, 200, "User deleted");
    },
  },
  {
    method: "post", path: `${U}/restore`, data: data.user, errors: { 409: "Not deleted (NOT_DELETED)" }, tag: "admin", auth: "user", summary: "Restore a soft-deleted account",
    handle: async (req, res) => sendData(res, 200, "User restored", { user: await s.adminUsers.restore(req.ctx, param(req, "userId")) }),
  },
  {
    method: "get", path: `${U}/mfa`, tag: "admin", auth: "user", summary: "An account's MFA methods (no secrets)",
    handle: async (req, res) => sendData(res, 200, "MFA methods", await s.adminUsers.mfaMethods(req.ctx, param(req, "userId"))),
  },
  {
    method: "delete", path: `${U}/mfa/:method`, data: null, tag: "admin", auth: "user", query: z.object({ credentialId: z.string().optional() }),
    summary: "Remove an account's MFA: totp, webauthn (all, or ?credential_id=) or all; the owner is emailed",
    handle: async (req, res) => {
      await s.adminUsers.removeMfa(req.ctx, param(req, "userId"), { method: param(req, "method"), credentialId: (req.query.credential_id as string) || undefined });
      sendData(res, 200, "MFA removed");
    },
  },
  {
    method: "get", path: "/superadmin/users", data: data.adminUsers, tag: "superadmin", auth: "superadmin", query: adminUsersQuerySchema, summary: "Every account (superadmins)",
    handle: async (req, res) => {
      const { items, ...page } = await s.adminUsers.searchAll(req.ctx, queryInput(req));
      sendData(res, 200, "Users", { users: items, ...page });
    },
  },
  {
    method: "get", path: "/superadmin/users/:userId/audit", tag: "superadmin", auth: "superadmin", query: auditQuerySchema,
    summary: "Every audit record about one account (superadmins)",
    handle: async (req, res) => {
      const { items, ...page } = await s.adminUsers.userAudit(req.ctx, param(req, "userId"), queryInput(req));
      sendData(res, 200, "Audit log", { auditLogs: items.map((e) => ({ ...e, metadata: new Verbatim(e.metadata) })), ...page });
    },
  },
] satisfies RouteDef[]).map(onAnotherAccount);
