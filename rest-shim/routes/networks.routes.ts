import type { Services } from "../../src/container.js";
import {
  activateSchema,
  assignApprovalSchema,
  controllerConfigSchema,
  createDeviceSchema,
  createNetworkSchema,
  decideSchema,
  importMembersSchema,
  importNetworksSchema,
  killSwitchSchema,
  listNetworksSchema,
  managersSchema,
  pendingQuerySchema,
  requestApprovalSchema,
  updateDeviceSchema,
  updateNetworkSchema,
} from "../../src/modules/networks/index.js";
import { sendData, sendList } from "../envelope.js";
import { input, param, queryInput, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

const O = "/organizations/:orgId";
const org = (req: Parameters<RouteDef["handle"]>[0]) => param(req, "orgId");

/** What the controller and the governance rules can answer on a write (and on reads that ask the controller). */
const controlled: RouteDef["errors"] = {
  409: "A conflict: no controller configured yet (CONTROLLER_NOT_CONFIGURED), already imported or registered, an approval already open, or a state that does not allow it",
  502: "The network controller failed, cannot be reached or refused Keyward's token (CONTROLLER_*)",
  503: "The network controller is rate limiting Keyward (CONTROLLER_RATE_LIMITED)",
};

/** Governed access to ZeroTier networks (reference §2.12): paths and fields as the original system's client uses them. */
export const networksRoutes = (s: Services): RouteDef[] => [
  // --- controller connection (admins) ---
  {
    method: "get", path: `${O}/zerotier-config`, tag: "networks", auth: "user", org: "admin", summary: "The organization's controller connection (never its token)",
    handle: async (req, res) => sendData(res, 200, "Controller configuration", { config: await s.networkController.get(req.ctx, org(req)) }),
  },
  {
    method: "put", path: `${O}/zerotier-config`, errors: controlled, tag: "networks", auth: "user", org: "admin", body: controllerConfigSchema,
    summary: "Connect a controller (self-hosted or ZeroTier Central): saved only after a live connectivity test",
    handle: async (req, res) => sendData(res, 200, "Controller connected", { config: await s.networkController.put(req.ctx, org(req), input(req)) }),
  },
  {
    method: "delete", path: `${O}/zerotier-config`, errors: controlled, tag: "networks", auth: "user", org: "admin", summary: "Disconnect the controller",
    handle: async (req, res) => {
      await s.networkController.remove(req.ctx, org(req));
      sendData(res, 200, "Controller disconnected", {});
    },
  },
  {
    method: "get", path: `${O}/zerotier/available-networks`, errors: controlled, tag: "networks", auth: "user", org: "admin", summary: "The controller's networks not imported yet",
    handle: async (req, res) => sendList(res, 200, "Available networks", "networks", await s.portalNetworks.available(req.ctx, org(req))),
  },
  {
    method: "post", path: `${O}/zerotier/import-networks`, errors: controlled, tag: "networks", auth: "user", org: "admin", body: importNetworksSchema, status: 201,
    summary: "Import controller networks as portal networks",
    handle: async (req, res) => sendList(res, 201, "Networks imported", "networks", await s.portalNetworks.importNetworks(req.ctx, org(req), input(req))),
  },
  // --- portal networks ---
  {
    method: "get", path: `${O}/networks`, data: data.networks, tag: "networks", auth: "user", org: "member", scope: "networks:activate", query: listNetworksSchema, summary: "Portal networks (?include_inactive=true)",
    handle: async (req, res) => sendList(res, 200, "Networks", "networks", await s.portalNetworks.list(req.ctx, org(req), queryInput(req))),
  },
  {
    method: "post", path: `${O}/networks`, data: data.network, errors: controlled, tag: "networks", auth: "user", org: "admin", body: createNetworkSchema, status: 201, summary: "Add a portal network (it must exist at the controller)",
    handle: async (req, res) => sendData(res, 201, "Network created", { network: await s.portalNetworks.create(req.ctx, org(req), input(req)) }),
  },
  {
    method: "post", path: `${O}/networks/reconcile`, errors: controlled, tag: "networks", auth: "user", org: "admin", summary: "Reconcile the organization's networks with the controller now",
    handle: async (req, res) => sendData(res, 200, "Reconciled", await s.networkReconcile.reconcileOrg(req.ctx, org(req))),
  },
  {
    method: "get", path: `${O}/networks/:networkId`, data: data.network, tag: "networks", auth: "user", org: "member", summary: "A portal network",
    handle: async (req, res) => sendData(res, 200, "Network", { network: await s.portalNetworks.get(req.ctx, org(req), param(req, "networkId")) }),
  },
  {
    method: "patch", path: `${O}/networks/:networkId`, data: data.network, errors: controlled, tag: "networks", auth: "user", org: "admin", body: updateNetworkSchema, summary: "Change a portal network",
    handle: async (req, res) => sendData(res, 200, "Network updated", { network: await s.portalNetworks.update(req.ctx, org(req), param(req, "networkId"), input(req)) }),
  },
  {
    method: "delete", path: `${O}/networks/:networkId`, errors: controlled, tag: "networks", auth: "user", org: "admin", summary: "Remove a portal network: activations end and its devices come off",
    handle: async (req, res) => {
      await s.portalNetworks.remove(req.ctx, org(req), param(req, "networkId"));
      sendData(res, 200, "Network deleted", {});
    },
  },
  {
    method: "get", path: `${O}/networks/:networkId/members`, tag: "networks", auth: "user", org: "member", summary: "Managers: the network's device memberships, with names",
    handle: async (req, res) => sendList(res, 200, "Network members", "memberships", await s.portalNetworks.members(req.ctx, org(req), param(req, "networkId"))),
  },
  {
    method: "get", path: `${O}/networks/:networkId/requests`, data: data.networkRequests, tag: "networks", auth: "user", org: "member", summary: "Managers: pending requests for the network",
    handle: async (req, res) => sendList(res, 200, "Pending requests", "requests", await s.portalNetworks.requests(req.ctx, org(req), param(req, "networkId"))),
  },
  {
    method: "get", path: `${O}/networks/:networkId/managers`, tag: "networks", auth: "user", org: "member", summary: "The network's named managers",
    handle: async (req, res) => sendList(res, 200, "Managers", "managers", await s.portalNetworks.managers(req.ctx, org(req), param(req, "networkId"))),
  },
  {
    method: "put", path: `${O}/networks/:networkId/managers`, errors: controlled, tag: "networks", auth: "user", org: "admin", body: managersSchema, summary: "Name the network's managers (besides owners and admins)",
    handle: async (req, res) => sendList(res, 200, "Managers set", "managers", await s.portalNetworks.setManagers(req.ctx, org(req), param(req, "networkId"), input(req))),
  },
  // --- devices ---
  {
    method: "get", path: `${O}/devices`, data: data.devices, tag: "networks", auth: "user", org: "member", scope: "networks:activate", summary: "Your devices",
    handle: async (req, res) => sendList(res, 200, "Devices", "devices", await s.devices.list(req.ctx, org(req))),
  },
  {
    method: "post", path: `${O}/devices`, data: data.deviceCreated, errors: controlled, tag: "networks", auth: "user", org: "member", body: createDeviceSchema, status: 201, summary: "Register a device (its 10-hex ZeroTier node id)",
    handle: async (req, res) => sendData(res, 201, "Device registered", await s.devices.create(req.ctx, org(req), input(req))),
  },
  {
    method: "post", path: `${O}/devices/import`, errors: controlled, tag: "networks", auth: "user", org: "admin", body: importMembersSchema, summary: "Import a network's controller members as people's devices",
    handle: async (req, res) => sendData(res, 200, "Members imported", await s.devices.importMembers(req.ctx, org(req), input(req))),
  },
  {
    method: "get", path: `${O}/devices/:deviceId`, tag: "networks", auth: "user", org: "member", scope: "networks:activate", summary: "A device and its networks",
    handle: async (req, res) => sendData(res, 200, "Device", { device: await s.devices.get(req.ctx, org(req), param(req, "deviceId")) }),
  },
  {
    method: "patch", path: `${O}/devices/:deviceId`, data: data.device, errors: controlled, tag: "networks", auth: "user", org: "member", body: updateDeviceSchema, summary: "Rename a device or mark it inactive",
    handle: async (req, res) => sendData(res, 200, "Device updated", { device: await s.devices.update(req.ctx, org(req), param(req, "deviceId"), input(req)) }),
  },
  {
    method: "delete", path: `${O}/devices/:deviceId`, errors: controlled, tag: "networks", auth: "user", org: "member", summary: "Delete a device: it comes off every network",
    handle: async (req, res) => {
      await s.devices.remove(req.ctx, org(req), param(req, "deviceId"));
      sendData(res, 200, "Device deleted", {});
    },
  },
  {
    method: "post", path: `${O}/devices/:deviceId/join-network/:networkId`, errors: controlled, tag: "networks", auth: "user", org: "member", status: 201, summary: "Put a device on a network",
    handle: async (req, res) => sendData(res, 201, "Device added to the network", { membership: await s.devices.joinNetwork(req.ctx, org(req), param(req, "deviceId"), param(req, "networkId")) }),
  },
  // --- approvals ---
  {
    method: "post", path: `${O}/approvals`, data: data.approval, errors: controlled, tag: "networks", auth: "user", org: "member", body: requestApprovalSchema, status: 201, summary: "Ask for access to a network",
    handle: async (req, res) => sendData(res, 201, "Access requested", { approval: await s.networkApprovals.request(req.ctx, org(req), input(req)) }),
  },
  {
    method: "get", path: `${O}/approvals`, data: data.approvals, tag: "networks", auth: "user", org: "member", scope: "networks:activate", summary: "Your approvals",
    handle: async (req, res) => sendList(res, 200, "Approvals", "approvals", await s.networkApprovals.listMine(req.ctx, org(req))),
  },
  {
    method: "get", path: `${O}/approvals/pending`, data: data.approvals, tag: "networks", auth: "user", org: "member", query: pendingQuerySchema, summary: "Managers: requests waiting for a decision (?network_id=)",
    handle: async (req, res) => sendList(res, 200, "Pending approvals", "approvals", await s.networkApprovals.pending(req.ctx, org(req), queryInput(req))),
  },
  {
    method: "post", path: `${O}/approvals/assign`, data: data.approval, errors: controlled, tag: "networks", auth: "user", org: "member", body: assignApprovalSchema, status: 201, summary: "Managers: grant a member access directly",
    handle: async (req, res) => sendData(res, 201, "Access granted", { approval: await s.networkApprovals.assign(req.ctx, org(req), input(req)) }),
  },
  ...(["approve", "reject", "revoke"] as const).map(
    (action): RouteDef => ({
      method: "post", path: `${O}/approvals/:approvalId/${action}`, data: data.approval, errors: controlled, tag: "networks", auth: "user", org: "member", body: decideSchema,
      summary: `Managers: ${action} a request${action === "revoke" ? " (activations end, devices come off)" : ""}`,
      handle: async (req, res) => sendData(res, 200, `Approval ${action === "approve" ? "approved" : action === "reject" ? "rejected" : "revoked"}`, { approval: await s.networkApprovals[action](req.ctx, org(req), param(req, "approvalId"), input(req)) }),
    }),
  ),
  // --- memberships and activation ---
  {
    method: "get", path: `${O}/memberships`, tag: "networks", auth: "user", org: "member", scope: "networks:activate", summary: "Your device memberships, with time left",
    handle: async (req, res) => sendList(res, 200, "Memberships", "memberships", await s.networkAccess.memberships(req.ctx, org(req))),
  },
  {
    method: "post", path: `${O}/memberships/activate-all`, errors: controlled, tag: "networks", auth: "user", org: "member", scope: "networks:activate", body: activateSchema, summary: "Activate every approved device membership at once",
    handle: async (req, res) => {
      const { sessions, controllerSynced } = await s.networkAccess.activateAll(req.ctx, org(req), input(req));
      sendData(res, 200, "Activated", { sessions, count: sessions.length, controllerSynced });
    },
  },
  {
    method: "post", path: `${O}/memberships/:membershipId/activate`, errors: controlled, tag: "networks", auth: "user", org: "member", scope: "networks:activate", body: activateSchema, summary: "Switch access on for a bounded time",
    handle: async (req, res) => sendData(res, 200, "Activated", await s.networkAccess.activate(req.ctx, org(req), param(req, "membershipId"), input(req))),
  },
  {
    method: "post", path: `${O}/memberships/:membershipId/deactivate`, errors: controlled, tag: "networks", auth: "user", org: "member", scope: "networks:activate", summary: "Switch access off now",
    handle: async (req, res) => sendData(res, 200, "Deactivated", { membership: await s.networkAccess.deactivate(req.ctx, org(req), param(req, "membershipId")) }),
  },
  {
    method: "delete", path: `${O}/memberships/:membershipId`, errors: controlled, tag: "networks", auth: "user", org: "member", summary: "Take your device off a network",
    handle: async (req, res) => {
      await s.networkAccess.leave(req.ctx, org(req), param(req, "membershipId"));
      sendData(res, 200, "Membership removed", {});
    },
  },
  {
    method: "get", path: `${O}/admin/memberships`, tag: "networks", auth: "user", org: "admin", summary: "Every device membership of the organization, with names",
    handle: async (req, res) => sendList(res, 200, "Memberships", "memberships", await s.networkAccess.adminMemberships(req.ctx, org(req))),
  },
  {
    method: "delete", path: `${O}/admin/memberships/:membershipId`, errors: controlled, tag: "networks", auth: "user", org: "admin", summary: "Remove someone's device from a network",
    handle: async (req, res) => {
      await s.networkAccess.adminRemoveMembership(req.ctx, org(req), param(req, "membershipId"));
      sendData(res, 200, "Membership removed", {});
    },
  },
  {
    method: "get", path: `${O}/sessions`, tag: "networks", auth: "user", org: "member", summary: "Running activations (the organization's for admins, yours otherwise)",
    handle: async (req, res) => sendList(res, 200, "Activation sessions", "sessions", await s.networkAccess.sessions(req.ctx, org(req))),
  },
  {
    method: "delete", path: `${O}/sessions/:sessionId`, errors: controlled, tag: "networks", auth: "user", org: "member", summary: "End an activation now",
    handle: async (req, res) => {
      await s.networkAccess.endSession(req.ctx, org(req), param(req, "sessionId"));
      sendData(res, 200, "Activation ended", {});
    },
  },
  // --- kill switch ---
  {
    method: "post", path: `${O}/kill-switch`, errors: controlled, tag: "networks", auth: "user", org: "admin", body: killSwitchSchema, status: 201,
    summary: "Cut a person off at once: activations end, devices deauthorized, access suspended until lifted",
    handle: async (req, res) => sendData(res, 201, "Kill switch triggered", await s.networkAccess.killSwitch(req.ctx, org(req), input(req))),
  },
  {
    method: "get", path: `${O}/kill-switch`, tag: "networks", auth: "user", org: "admin", summary: "Kill-switch history",
    handle: async (req, res) => sendList(res, 200, "Kill-switch events", "events", await s.networkAccess.killSwitchHistory(req.ctx, org(req))),
  },
  {
    method: "post", path: `${O}/kill-switch/:eventId/lift`, errors: controlled, tag: "networks", auth: "user", org: "admin", summary: "Lift a kill switch (access can be activated again)",
    handle: async (req, res) => sendData(res, 200, "Kill switch lifted", { event: await s.networkAccess.liftKillSwitch(req.ctx, org(req), param(req, "eventId")) }),
  },
  // --- global ---
  {
    method: "post", path: "/admin/zerotier/reconcile", errors: controlled, tag: "networks", auth: "superadmin", summary: "Superadmins: reconcile every organization's networks now",
    handle: async (req, res) => sendData(res, 200, "Reconciled", await s.networkReconcile.reconcileAll(req.ctx)),
  },
];
