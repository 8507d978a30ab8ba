import type { Services } from "../../src/container.js";
import { certPolicySchema, departmentSchema, emailSchema, principalSchema, updateDepartmentSchema, updatePrincipalSchema } from "../../src/modules/orgs/orgs.schemas.js";
import { sendData } from "../envelope.js";
import { input, param, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

const D = "/organizations/:orgId/departments";
const P = "/organizations/:orgId/principals";
const list = <T>(key: string, items: T[]) => ({ [key]: items, count: items.length });

/** Departments, principals and department certificate policy. */
export const directoryRoutes = (s: Services): RouteDef[] => [
  {
    method: "get", path: D, data: data.departments, tag: "departments", auth: "user", org: "guest", summary: "Departments",
    handle: async (req, res) => sendData(res, 200, "Departments", list("departments", await s.departments.list(req.ctx, param(req, "orgId")))),
  },
  {
    method: "post", path: D, data: data.department, errors: { 409: "A department with this name exists (DEPARTMENT_EXISTS)" }, tag: "departments", auth: "user", org: "admin", body: departmentSchema, status: 201, summary: "Create a department",
    handle: async (req, res) => sendData(res, 201, "Department created", { department: await s.departments.create(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "get", path: `${D}/:deptId`, data: data.department, tag: "departments", auth: "user", org: "guest", summary: "A department",
    handle: async (req, res) => sendData(res, 200, "Department", { department: await s.departments.get(req.ctx, param(req, "orgId"), param(req, "deptId")) }),
  },
  {
    method: "patch", path: `${D}/:deptId`, data: data.department, errors: { 409: "A department with this name exists (DEPARTMENT_EXISTS)" }, tag: "departments", auth: "user", org: "admin", body: updateDepartmentSchema, summary: "Change a department",
    handle: async (req, res) =>
      sendData(res, 200, "Department updated", { department: await s.departments.update(req.ctx, param(req, "orgId"), param(req, "deptId"), input(req)) }),
  },
  {
    method: "delete", path: `${D}/:deptId`, data: null, tag: "departments", auth: "user", org: "admin", summary: "Delete a department",
    handle: async (req, res) => {
      await s.departments.delete(req.ctx, param(req, "orgId"), param(req, "deptId"));
      sendData(res, 200, "Department deleted");
    },
  },
  {
    method: "get", path: `${D}/:deptId/members`, data: data.groupMembers, tag: "departments", auth: "user", org: "guest", summary: "Members of a department",
    handle: async (req, res) => sendData(res, 200, "Department members", list("members", await s.departments.listMembers(req.ctx, param(req, "orgId"), param(req, "deptId")))),
  },
  {
    method: "post", path: `${D}/:deptId/members`, data: data.addedMember, errors: { 409: "Already in the department (ALREADY_MEMBER)" }, tag: "departments", auth: "user", org: "admin", body: emailSchema, status: 201, summary: "Add an organization member to a department",
    handle: async (req, res) =>
      sendData(res, 201, "Member added", { member: await s.departments.addMember(req.ctx, param(req, "orgId"), param(req, "deptId"), input(req)) }),
  },
  {
    method: "delete", path: `${D}/:deptId/members/:userId`, data: null, tag: "departments", auth: "user", org: "admin", summary: "Remove someone from a department",
    handle: async (req, res) => {
      await s.departments.removeMember(req.ctx, param(req, "orgId"), param(req, "deptId"), param(req, "userId"));
      sendData(res, 200, "Member removed");
    },
  },
  {
    method: "get", path: `${D}/:deptId/principals`, data: data.principals, tag: "departments", auth: "user", org: "guest", summary: "Principals a department grants",
    handle: async (req, res) => sendData(res, 200, "Principals", list("principals", await s.departments.listPrincipals(req.ctx, param(req, "orgId"), param(req, "deptId")))),
  },
  {
    method: "get", path: `${D}/:deptId/cert-policy`, data: data.certPolicy, tag: "departments", auth: "user", org: "admin", summary: "The department's certificate policy (defaults when none is set)",
    handle: async (req, res) => sendData(res, 200, "Certificate policy", { certPolicy: await s.departments.getCertPolicy(req.ctx, param(req, "orgId"), param(req, "deptId")) }),
  },
  {
    method: "put", path: `${D}/:deptId/cert-policy`, data: data.certPolicy, tag: "departments", auth: "user", org: "admin", body: certPolicySchema, summary: "Change any part of the certificate policy",
    handle: async (req, res) =>
      sendData(res, 200, "Certificate policy updated", { certPolicy: await s.departments.putCertPolicy(req.ctx, param(req, "orgId"), param(req, "deptId"), input(req)) }),
  },
  {
    method: "get", path: P, data: data.principals, tag: "principals", auth: "user", org: "guest", summary: "Principals",
    handle: async (req, res) => sendData(res, 200, "Principals", list("principals", await s.principals.list(req.ctx, param(req, "orgId")))),
  },
  {
    method: "post", path: P, data: data.principal, errors: { 409: "A principal with this name exists (PRINCIPAL_EXISTS)" }, tag: "principals", auth: "user", org: "admin", body: principalSchema, status: 201, summary: "Create a principal",
    handle: async (req, res) => sendData(res, 201, "Principal created", { principal: await s.principals.create(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "get", path: `${P}/:principalId`, data: data.principal, tag: "principals", auth: "user", org: "guest", summary: "A principal",
    handle: async (req, res) => sendData(res, 200, "Principal", { principal: await s.principals.get(req.ctx, param(req, "orgId"), param(req, "principalId")) }),
  },
  {
    method: "patch", path: `${P}/:principalId`, data: data.principal, errors: { 409: "A principal with this name exists (PRINCIPAL_EXISTS)" }, tag: "principals", auth: "user", org: "admin", body: updatePrincipalSchema, summary: "Change a principal",
    handle: async (req, res) =>
      sendData(res, 200, "Principal updated", { principal: await s.principals.update(req.ctx, param(req, "orgId"), param(req, "principalId"), input(req)) }),
  },
  {
    method: "delete", path: `${P}/:principalId`, data: null, tag: "principals", auth: "user", org: "admin", summary: "Delete a principal",
    handle: async (req, res) => {
      await s.principals.delete(req.ctx, param(req, "orgId"), param(req, "principalId"));
      sendData(res, 200, "Principal deleted");
    },
  },
  {
    method: "get", path: `${P}/:principalId/members`, data: data.groupMembers, tag: "principals", auth: "user", org: "guest", summary: "Who holds a principal directly",
    handle: async (req, res) => sendData(res, 200, "Principal members", list("members", await s.principals.listMembers(req.ctx, param(req, "orgId"), param(req, "principalId")))),
  },
  {
    method: "post", path: `${P}/:principalId/members`, data: data.addedMember, errors: { 409: "Already holds the principal (ALREADY_MEMBER)" }, tag: "principals", auth: "user", org: "admin", body: emailSchema, status: 201, summary: "Grant a principal to a member directly",
    handle: async (req, res) =>
      sendData(res, 201, "Member added", { member: await s.principals.addMember(req.ctx, param(req, "orgId"), param(req, "principalId"), input(req)) }),
  },
  {
    method: "delete", path: `${P}/:principalId/members/:userId`, data: null, tag: "principals", auth: "user", org: "admin", summary: "Take a direct principal grant away",
    handle: async (req, res) => {
      await s.principals.removeMember(req.ctx, param(req, "orgId"), param(req, "principalId"), param(req, "userId"));
      sendData(res, 200, "Member removed");
    },
  },
  {
    method: "get", path: `${P}/:principalId/departments`, data: data.departments, tag: "principals", auth: "user", org: "guest", summary: "Departments that grant a principal",
    handle: async (req, res) => sendData(res, 200, "Departments", list("departments", await s.principals.listDepartments(req.ctx, param(req, "orgId"), param(req, "principalId")))),
  },
  {
    method: "post", path: `${P}/:principalId/departments/:deptId`, data: null, errors: { 409: "Already linked (ALREADY_LINKED)" }, tag: "principals", auth: "user", org: "admin", status: 201, summary: "Grant a principal to a department",
    handle: async (req, res) => {
      await s.principals.linkDepartment(req.ctx, param(req, "orgId"), param(req, "principalId"), param(req, "deptId"));
      sendData(res, 201, "Principal linked to department");
    },
  },
  {
    method: "delete", path: `${P}/:principalId/departments/:deptId`, data: null, tag: "principals", auth: "user", org: "admin", summary: "Stop granting a principal to a department",
    handle: async (req, res) => {
      await s.principals.unlinkDepartment(req.ctx, param(req, "orgId"), param(req, "principalId"), param(req, "deptId"));
      sendData(res, 200, "Principal unlinked from department");
    },
  },
];
