import { registerEnumType } from "type-graphql";

// Closed sets a client picks from. Lifecycle states (memberships, approvals, sessions) stay
// strings: they are read, never sent, and a state added by the service must not break a reply.
export enum ControllerMode {
  controller = "controller",
  central = "central",
}
registerEnumType(ControllerMode, { name: "ControllerMode", description: "controller: a self-hosted ZeroTierOne controller; central: ZeroTier Central" });

export enum NetworkEnvironment {
  production = "production",
  staging = "staging",
  development = "development",
  lab = "lab",
}
registerEnumType(NetworkEnvironment, { name: "NetworkEnvironment" });

export enum NetworkRequestMode {
  open = "open",
  approval_required = "approval_required",
  invite_only = "invite_only",
}
registerEnumType(NetworkRequestMode, { name: "NetworkRequestMode", description: "open: asking is approval; approval_required: a manager decides; invite_only: managers assign" });

export enum DeviceStatus {
  active = "active",
  inactive = "inactive",
}
registerEnumType(DeviceStatus, { name: "DeviceStatus", description: "An inactive device holds no access" });

export enum KillSwitchScope {
  organization = "organization",
  global = "global",
  selected_networks = "selected_networks",
}
registerEnumType(KillSwitchScope, { name: "KillSwitchScope", description: "global: every organization's networks (superadmins only)" });
