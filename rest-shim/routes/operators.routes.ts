import type { Services } from "../../src/container.js";
import { allOrgsQuerySchema } from "../../src/modules/orgs/index.js";
import { globalKillSwitchListSchema, globalKillSwitchSchema } from "../../src/modules/networks/index.js";
import { sendData } from "../envelope.js";
import { input, param, queryInput, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

const U = "/superadmin/users/:userId";
const K = "/superadmin/kill-switch";

/** What only Keyward's operators (superadmins) do: make and unmake operators, every organization, the global kill switch. */
export const operatorsRoutes = (s: Services): RouteDef[] => [
  {
    method: "post", path: `${U}/promote`, data: data.user, tag: "superadmin", auth: "superadmin",
    errors: { 400: "The account is your own (BAD_REQUEST)", 409: "Already a superadmin (ALREADY_SUPERADMIN), not active (ACCOUNT_NOT_ACTIVE) or its address is not verified (EMAIL_UNVERIFIED)" },
    summary: "Make an active account with a verified address a superadmin",
    handle: async (req, res) => sendData(res, 200, "User promoted", { user: await s.operators.promote(req.ctx, param(req, "userId")) }),
  },
  {
    method: "post", path: `${U}/demote`, data: data.user, tag: "superadmin", auth: "superadmin",
    errors: { 400: "The account is your own: another superadmin must do it (BAD_REQUEST)", 409: "Not a superadmin (NOT_SUPERADMIN)" },
    summary: "Take superadmin away from another account",
    handle: async (req, res) => sendData(res, 200, "User demoted", { user: await s.operators.demote(req.ctx, param(req, "userId")) }),
  },
  {
    method: "get", path: "/superadmin/organizations", tag: "superadmin", auth: "superadmin", query: allOrgsQuerySchema,
    summary: "Every organization with its member count and owners (?q=&page=&per_page=)",
    handle: async (req, res) => {
      const { items, ...page } = await s.allOrganizations.list(req.ctx, queryInput(req));
      sendData(res, 200, "Organizations", { organizations: items, ...page });
    },
  },
  {
    method: "get", path: K, tag: "superadmin", auth: "superadmin", query: globalKillSwitchListSchema,
    summary: "Global kill switches, newest first (?in_force=true|false&page=&per_page=)",
    handle: async (req, res) => {
      const { items, ...page } = await s.globalKillSwitch.list(req.ctx, queryInput(req));
      sendData(res, 200, "Global kill switches", { events: items, ...page });
    },
  },
  {
    method: "post", path: K, tag: "superadmin", auth: "superadmin", body: globalKillSwitchSchema, status: 201,
    errors: { 404: "No such account (NOT_FOUND)", 409: "A global kill switch on the person is already in force (KILL_SWITCH_IN_FORCE)" },
    summary: "Cut a person off every network of every organization until an operator lifts it (not yourself)",
    handle: async (req, res) => sendData(res, 201, "Kill switch triggered", await s.globalKillSwitch.trigger(req.ctx, input(req))),
  },
  {
    method: "post", path: `${K}/:eventId/lift`, tag: "superadmin", auth: "superadmin",
    summary: "Lift a global kill switch: access comes back as approved, devices stay off until switched on",
    handle: async (req, res) => sendData(res, 200, "Kill switch lifted", { event: await s.globalKillSwitch.lift(req.ctx, param(req, "eventId")) }),
  },
];
