import type { Services } from "../../src/container.js";
import type { z } from "zod";
import type { ApiKeyScope } from "../../src/lib/api-key-scopes.js";
import { certPolicySchema, departmentSchema, emailSchema, principalSchema, updateDepartmentSchema, updatePrincipalSchema } from "../../src/modules/orgs/index.js";
import { sendData, sendList } from "../envelope.js";
import { input, param, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

const D = "/organizations/:orgId/departments";
const P = "/organizations/:orgId/principals";

/**
 * The routes departments and principals share (one organization-group service behind both): list,
 * create, read, change, delete, and direct members. Only names, views and texts differ.
 */
interface GroupKind {
  base: string;
  id: string;
  tag: "departments" | "principals";
  one: "department" | "principal";
  service: Services["departments"] | Services["principals"];
  views: { one: z.ZodType; many: z.ZodType };
  create: z.ZodType;
  update: z.ZodType;
  exists: string;
  text: { list: string; membersList: string; addMember: string; alreadyMember: string; removeMember: string; membersMessage: string };
  /** The scope an organization API key needs to list them (undefined: keys may not). */
  listApiKey?: ApiKeyScope;
}

function groupRoutes(k: GroupKind): RouteDef[] {
  const Name = k.one[0]!.toUpperCase() + k.one.slice(1);
  const item = `${k.base}/:${k.id}`;
  const id = (req: Parameters<RouteDef["handle"]>[0]) => [param(req, "orgId"), param(req, k.id)] as const;
  const common = { tag: k.tag, auth: "user" } as const;
  return [
    {
      ...common, method: "get", path: k.base, data: k.views.many, org: "guest", ...(k.listApiKey ? { apiKey: k.listApiKey } : {}), summary: k.text.list,
      handle: async (req, res) => sendList(res, 200, k.text.list, k.tag, await k.service.list(req.ctx, param(req, "orgId"))),
    },
    {
      ...common, method: "post", path: k.base, data: k.views.one, errors: { 409: k.exists }, org: "admin", body: k.create, status: 201, summary: `Create a ${k.one}`,
      handle: async (req, res) => sendData(res, 201, `${Name} created`, { [k.one]: await k.service.create(req.ctx, param(req, "orgId"), input(req)) }),
    },
    {
      ...common, method: "get", path: item, data: k.views.one, org: "guest", summary: `A ${k.one}`,
      handle: async (req, res) => sendData(res, 200, Name, { [k.one]: await k.service.get(req.ctx, ...id(req)) }),
    },
    {
      ...common, method: "patch", path: item, data: k.views.one, errors: { 409: k.exists }, org: "admin", body: k.update, summary: `Change a ${k.one}`,
      handle: async (req, res) => sendData(res, 200, `${Name} updated`, { [k.one]: await k.service.update(req.ctx, ...id(req), input(req)) }),
    },
    {
      ...common, method: "delete", path: item, data: null, org: "admin", summary: `Delete a ${k.one}`,
      handle: async (req, res) => {
        await k.service.delete(req.ctx, ...id(req));
        sendData(res, 200, `${Name} deleted`);
      },
    },
    {
      ...common, method: "get", path: `${item}/members`, data: data.groupMembers, org: "guest", summary: k.text.membersList,
      handle: async (req, res) => sendList(res, 200, k.text.membersMessage, "members", await k.service.listMembers(req.ctx, ...id(req))),
    },
    {
      ...common, method: "post", path: `${item}/members`, data: data.addedMember, errors: { 409: k.text.alreadyMember }, org: "admin", body: emailSchema, status: 201, summary: k.text.addMember,
      handle: async (req, res) => sendData(res, 201, "Member added", { member: await k.service.addMember(req.ctx, ...id(req), input(req)) }),
    },
    {
      ...common, method: "delete", path: `${item}/members/:userId`, data: null, org: "admin", summary: k.text.removeMember,
      handle: async (req, res) => {
        await k.service.removeMember(req.ctx, ...id(req), param(req, "userId"));
        sendData(res, 200, "Member removed");
      },
    },
  ];
}

/** Departments, principals and department certificate policy. */
export const directoryRoutes = (s: Services): RouteDef[] => [
  ...groupRoutes({
    base: D, id: "deptId", tag: "departments", one: "department", service: s.departments, views: { one: data.department, many: data.departments },
    create: departmentSchema, update: updateDepartmentSchema, exists: "A department with this name exists (DEPARTMENT_EXISTS)",
    text: { list: "Departments", membersList: "Members of a department", membersMessage: "Department members", addMember: "Add an organization member to a department", alreadyMember: "Already in the department (ALREADY_MEMBER)", removeMember: "Remove someone from a department" },
  }),
  {
    method: "get", path: `${D}/:deptId/principals`, data: data.principals, tag: "departments", auth: "user", org: "guest", summary: "Principals a department grants",
    handle: async (req, res) => sendList(res, 200, "Principals", "principals", await s.departments.listPrincipals(req.ctx, param(req, "orgId"), param(req, "deptId"))),
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
  ...groupRoutes({
    base: P, id: "principalId", tag: "principals", one: "principal", service: s.principals, views: { one: data.principal, many: data.principals }, listApiKey: "principals:read",
    create: principalSchema, update: updatePrincipalSchema, exists: "A principal with this name exists (PRINCIPAL_EXISTS)",
    text: { list: "Principals", membersList: "Who holds a principal directly", membersMessage: "Principal members", addMember: "Grant a principal to a member directly", alreadyMember: "Already holds the principal (ALREADY_MEMBER)", removeMember: "Take a direct principal grant away" },
  }),
  {
    method: "get", path: `${P}/:principalId/departments`, data: data.departments, tag: "principals", auth: "user", org: "guest", summary: "Departments that grant a principal",
    handle: async (req, res) => sendList(res, 200, "Departments", "departments", await s.principals.listDepartments(req.ctx, param(req, "orgId"), param(req, "principalId"))),
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
