import type { Services } from "../../src/container.js";
import { accessPolicySchema, approveSchema, listRequestsSchema, rejectSchema, requestAccessSchema, revokeSchema } from "../../src/modules/access-requests/index.js";
import { sendData, sendList } from "../envelope.js";
import { input, param, queryInput, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

const O = "/organizations/:orgId";
const org = (req: Parameters<RouteDef["handle"]>[0]) => param(req, "orgId");

const decided: RouteDef["errors"] = {
  403: "Not an approver (AUTHORIZATION_ERROR), your own request (OWN_REQUEST: nobody decides their own), an approver only through a role grant (ELEVATED_ROLE_FORBIDS), or a role request and not an owner (OWNER_REQUIRED)",
  409: "Already decided (REQUEST_ALREADY_DECIDED) or lapsed (REQUEST_EXPIRED)",
};

/** Just-in-time access requests (issue 37): ask for a principal for a bounded time, decide, see grants. */
export const accessRequestsRoutes = (s: Services): RouteDef[] => [
  {
    method: "post", path: `${O}/access-requests`, data: data.accessRequest, tag: "access-requests", auth: "user", org: "member", scope: "ssh:sign", body: requestAccessSchema, status: 201,
    errors: {
      403: "The principal, department or role is not requestable, or not by you, or the role is not above yours, or is owner (NOT_REQUESTABLE)",
      404: "No such principal in the organization (PRINCIPAL_NOT_FOUND)",
      409: "You already have a pending request for it (ACCESS_REQUEST_EXISTS)",
    },
    summary: "Ask for a principal, a department's grants or an organization role (role: \"admin\") for a bounded time (duration_minutes or duration like \"2h\") with a reason; approved at once when its policy needs no approval",
    handle: async (req, res) => sendData(res, 201, "Access requested", { accessRequest: await s.accessRequests.request(req.ctx, org(req), input(req)) }),
  },
  {
    method: "get", path: `${O}/access-requests`, data: data.accessRequests, tag: "access-requests", auth: "user", org: "admin", query: listRequestsSchema, summary: "Admins: the organization's requests and grants (?state=)",
    handle: async (req, res) => sendList(res, 200, "Access requests", "accessRequests", await s.accessRequests.list(req.ctx, org(req), queryInput(req))),
  },
  {
    method: "get", path: `${O}/access-requests/pending`, data: data.accessRequests, tag: "access-requests", auth: "user", org: "admin", summary: "Approvers: requests waiting for a decision (never your own)",
    handle: async (req, res) => sendList(res, 200, "Pending access requests", "accessRequests", await s.accessRequests.pending(req.ctx, org(req))),
  },
  {
    method: "post", path: `${O}/access-requests/:requestId/approve`, data: data.accessRequest, tag: "access-requests", auth: "user", org: "admin", body: approveSchema, errors: decided,
    summary: "Approve, possibly for less time than asked (duration_minutes or duration); the grant starts now",
    handle: async (req, res) => sendData(res, 200, "Access request approved", { accessRequest: await s.accessRequests.approve(req.ctx, org(req), param(req, "requestId"), input(req)) }),
  },
  {
    method: "post", path: `${O}/access-requests/:requestId/reject`, data: data.accessRequest, tag: "access-requests", auth: "user", org: "admin", body: rejectSchema, errors: decided, summary: "Reject, with a reason",
    handle: async (req, res) => sendData(res, 200, "Access request rejected", { accessRequest: await s.accessRequests.reject(req.ctx, org(req), param(req, "requestId"), input(req)) }),
  },
  {
    method: "post", path: `${O}/access-requests/:requestId/cancel`, data: data.accessRequest, tag: "access-requests", auth: "user", org: "member", scope: "ssh:sign",
    errors: { 403: "Not your request (AUTHORIZATION_ERROR)", 409: "Already decided (REQUEST_ALREADY_DECIDED) or lapsed (REQUEST_EXPIRED)" }, summary: "Withdraw your pending request",
    handle: async (req, res) => sendData(res, 200, "Access request cancelled", { accessRequest: await s.accessRequests.cancel(req.ctx, org(req), param(req, "requestId")) }),
  },
  {
    method: "get", path: "/access-requests", data: data.accessRequests, tag: "access-requests", auth: "user", scope: "ssh:sign", summary: "Your requests and grants in every organization (active: in force now)",
    handle: async (req, res) => sendList(res, 200, "Your access requests", "accessRequests", await s.accessRequests.mine(req.ctx)),
  },
  {
    method: "get", path: `${O}/access-policies`, data: data.accessPolicies, tag: "access-requests", auth: "user", org: "guest", summary: "Which principals can be requested, by whom, for how long, with or without approval",
    handle: async (req, res) => sendList(res, 200, "Access request policies", "policies", await s.accessRequests.policies(req.ctx, org(req))),
  },
  {
    method: "put", path: `${O}/principals/:principalId/access-policy`, data: data.accessPolicy, tag: "access-requests", auth: "user", org: "admin", body: accessPolicySchema,
    errors: { 404: "No such principal or department in the organization (PRINCIPAL_NOT_FOUND, DEPARTMENT_NOT_FOUND)" }, summary: "Set a principal's request policy",
    handle: async (req, res) => sendData(res, 200, "Access request policy set", { policy: await s.accessRequests.setPolicy(req.ctx, org(req), param(req, "principalId"), input(req)) }),
  },
  {
    method: "get", path: `${O}/department-access-policies`, data: data.departmentAccessPolicies, tag: "access-requests", auth: "user", org: "guest",
    summary: "Which departments' grants (their principals, as if a member) can be requested, by whom, for how long, with or without approval",
    handle: async (req, res) => sendList(res, 200, "Department access request policies", "policies", await s.accessRequests.departmentPolicies(req.ctx, org(req))),
  },
  {
    method: "put", path: `${O}/departments/:departmentId/access-policy`, data: data.departmentAccessPolicy, tag: "access-requests", auth: "user", org: "admin", body: accessPolicySchema,
    errors: { 404: "No such department in the organization (DEPARTMENT_NOT_FOUND)" }, summary: "Set a department's request policy (its grants asked for a bounded time)",
    handle: async (req, res) => sendData(res, 200, "Department access request policy set", { policy: await s.accessRequests.setDepartmentPolicy(req.ctx, org(req), param(req, "departmentId"), input(req)) }),
  },
  {
    method: "post", path: `${O}/access-requests/:requestId/revoke`, data: data.accessRequest, tag: "access-requests", auth: "user", org: "admin", body: revokeSchema,
    errors: { 409: "Not a grant in force: pending, decided otherwise, already ended or ended early (GRANT_NOT_ACTIVE)" },
    summary: "End a grant in force early, with a reason: the next `ssh sign` leaves it out",
    handle: async (req, res) => sendData(res, 200, "Grant ended", { accessRequest: await s.accessRequests.revoke(req.ctx, org(req), param(req, "requestId"), input(req)) }),
  },
  {
    method: "get", path: `${O}/role-access-policies`, data: data.roleAccessPolicies, tag: "access-requests", auth: "user", org: "guest",
    summary: "Which organization roles (admin) can be requested, by whom, for how long, with or without approval",
    handle: async (req, res) => sendList(res, 200, "Role access request policies", "policies", await s.accessRequests.rolePolicies(req.ctx, org(req))),
  },
  {
    method: "put", path: `${O}/roles/:role/access-policy`, data: data.roleAccessPolicy, tag: "access-requests", auth: "user", org: "owner", body: accessPolicySchema,
    errors: { 400: "Not a role that can be lent (admin or member; never owner)", 404: "No such department (DEPARTMENT_NOT_FOUND)" },
    summary: "Owners: set an organization role's request policy (who may ask for it, for how long, with or without approval)",
    handle: async (req, res) => sendData(res, 200, "Role access request policy set", { policy: await s.accessRequests.setRolePolicy(req.ctx, org(req), param(req, "role"), input(req)) }),
  },
];
