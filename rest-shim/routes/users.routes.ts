import type { Services } from "../../src/container.js";
import { changeEmailSchema, changePasswordSchema } from "../../src/modules/auth/index.js";
import { deleteMeSchema, updateMeSchema } from "../../src/modules/users/index.js";
import { systemAuditQuerySchema } from "../../src/modules/audit/index.js";
import { Verbatim } from "../../src/lib/strings.js";
import { sendData } from "../envelope.js";
import { input, queryInput, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

export const usersRoutes = (s: Services): RouteDef[] => [
  {
    method: "get", path: "/audit-logs", tag: "users", auth: "user", query: systemAuditQuerySchema,
    summary: "The system audit log, newest first: every record for a superadmin, your own for anyone else (?action=&user_id=&resource_type=&success=&q=&page=&per_page=)",
    handle: async (req, res) => {
      const { items, ...page } = await s.activity.systemLog(req.ctx, queryInput(req));
      sendData(res, 200, "Audit log", { auditLogs: items.map((e) => ({ ...e, metadata: new Verbatim(e.metadata) })), ...page });
    },
  },
  {
    method: "get", path: "/users/me", data: data.profile, tag: "users", auth: "user", scope: "profile:read", summary: "Your profile, with totp_enabled and linked_providers (not for a delegated token)",
    handle: async (req, res) => sendData(res, 200, "Current user", { user: await s.users.getProfile(req.ctx) }),
  },
  {
    method: "patch", path: "/users/me", data: data.user, tag: "users", auth: "user", body: updateMeSchema, summary: "Update your name or avatar",
    handle: async (req, res) => sendData(res, 200, "Profile updated", { user: await s.users.updateMe(req.ctx, input(req)) }),
  },
  {
    method: "delete", path: "/users/me", data: null, errors: { 409: "You are the only owner of an organization with other members (USER_IS_SOLE_OWNER, details.transfer_ownership)" }, tag: "users", auth: "user", body: deleteMeSchema,
    summary: "Delete your account (soft delete; the current password is required when the account has one)",
    handle: async (req, res) => {
      await s.users.deleteMe(req.ctx, input(req));
      sendData(res, 200, "Account deleted");
    },
  },
  {
    method: "post", path: "/users/me/password", data: null, tag: "users", auth: "user", body: changePasswordSchema,
    summary: "Change your password (current password required); your other sessions end",
    handle: async (req, res) => sendData(res, 200, (await s.accounts.changePassword(req.ctx, input(req))).message),
  },
  {
    method: "post", path: "/users/me/email", data: null, errors: { 409: "The address belongs to another account (EMAIL_TAKEN)" }, tag: "users", auth: "user", body: changeEmailSchema,
    summary: "Change your email address (current password required): a link goes to new_email, and the address changes when it is opened (POST /auth/verify-email)",
    handle: async (req, res) => sendData(res, 200, (await s.accounts.requestEmailChange(req.ctx, input(req))).message),
  },
];
