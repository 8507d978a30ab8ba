import { closedSet, type ValueOf } from "../common/closed-set.js";

// Closed sets a client picks from. Lifecycle states (memberships, approvals, sessions) stay
// strings: they are read, never sent, and a state added by the service must not break a reply.
export const ControllerMode = closedSet("ControllerMode", ["controller", "central"], "controller: a self-hosted ZeroTierOne controller; central: ZeroTier Central");
export type ControllerMode = ValueOf<typeof ControllerMode>;

export const NetworkEnvironment = closedSet("NetworkEnvironment", ["production", "staging", "development", "lab"]);
export type NetworkEnvironment = ValueOf<typeof NetworkEnvironment>;

export const NetworkRequestMode = closedSet(
  "NetworkRequestMode",
  ["open", "approval_required", "invite_only"],
  "open: asking is approval; approval_required: a manager decides; invite_only: managers assign",
);
export type NetworkRequestMode = ValueOf<typeof NetworkRequestMode>;

export const DeviceStatus = closedSet("DeviceStatus", ["active", "inactive"], "An inactive device holds no access");
export type DeviceStatus = ValueOf<typeof DeviceStatus>;

export const KillSwitchScope = closedSet("KillSwitchScope", ["organization", "global", "selected_networks"], "global: every organization's networks (superadmins only)");
export type KillSwitchScope = ValueOf<typeof KillSwitchScope>;
