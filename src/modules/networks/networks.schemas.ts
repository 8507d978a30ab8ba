import { z } from "zod";

const hex = (n: number) => z.string().trim().toLowerCase().regex(new RegExp(`^[0-9a-f]{${n}}$`), `must be exactly ${n} hexadecimal characters`);
export const networkIdSchema = hex(16);
export const nodeIdSchema = hex(10);
const text = (max: number) => z.string().trim().min(1).max(max);
const optionalText = (max: number) => z.string().trim().max(max).nullish().transform((v) => (v ? v : null));
/** For updates: a field not sent stays as it is (undefined); sent as null or "" it is cleared. */
const patchText = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .nullish()
    .transform((v) => (v === undefined ? undefined : v || null));
const minutes = z.number().int().min(1).max(525_600);

export const controllerConfigSchema = z.object({
  ztApiMode: z.enum(["controller", "central"]),
  ztApiToken: z
    .string()
    .trim()
    .min(8)
    .max(512)
    .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces"),
  /** Self-hosted controllers only; Central is fixed (configurable for tests through the environment). */
  ztApiUrl: z.url({ protocol: /^https?$/ }).max(2048).optional(),
});
export type ControllerConfigInput = z.input<typeof controllerConfigSchema>;

export const environments = ["production", "staging", "development", "lab"] as const;
export const requestModes = ["open", "approval_required", "invite_only"] as const;

export const createNetworkSchema = z
  .object({
    name: text(255),
    zerotierNetworkId: networkIdSchema,
    description: optionalText(4000),
    environment: z.enum(environments).default("production"),
    requestMode: z.enum(requestModes).default("approval_required"),
    defaultActivationLifetimeMinutes: minutes.default(480),
    maxActivationLifetimeMinutes: minutes.nullish(),
  })
  .refine((v) => v.maxActivationLifetimeMinutes == null || v.defaultActivationLifetimeMinutes <= v.maxActivationLifetimeMinutes, {
    path: ["defaultActivationLifetimeMinutes"],
    message: "must not exceed max_activation_lifetime_minutes",
  });
export type CreateNetworkInput = z.input<typeof createNetworkSchema>;

export const updateNetworkSchema = z.object({
  name: text(255).optional(),
  description: patchText(4000),
  environment: z.enum(environments).optional(),
  requestMode: z.enum(requestModes).optional(),
  defaultActivationLifetimeMinutes: minutes.optional(),
  maxActivationLifetimeMinutes: minutes.nullish(),
  isActive: z.boolean().optional(),
});
export type UpdateNetworkInput = z.input<typeof updateNetworkSchema>;

export const listNetworksSchema = z.object({ includeInactive: z.union([z.boolean(), z.stringbool()]).optional() });
export type ListNetworksInput = z.input<typeof listNetworksSchema>;
export const importNetworksSchema = z.object({ zerotierNetworkIds: z.array(networkIdSchema).min(1).max(100) });
export type ImportNetworksInput = z.input<typeof importNetworksSchema>;
export const managersSchema = z.object({ userIds: z.array(z.uuid()).max(100) });
export type ManagersInput = z.input<typeof managersSchema>;

export const createDeviceSchema = z.object({
  nodeId: nodeIdSchema,
  nickname: optionalText(255),
  hostname: optionalText(255),
  assetTag: optionalText(255),
  serialNumber: optionalText(255),
});
export type CreateDeviceInput = z.input<typeof createDeviceSchema>;
export const updateDeviceSchema = z.object({
  nickname: patchText(255),
  hostname: patchText(255),
  assetTag: patchText(255),
  serialNumber: patchText(255),
  status: z.enum(["active", "inactive"]).optional(),
});
export type UpdateDeviceInput = z.input<typeof updateDeviceSchema>;
export const importMembersSchema = z.object({
  portalNetworkId: z.uuid(),
  /** node id → the person (by email) who owns it; members not listed are left alone. */
  assignments: z.array(z.object({ nodeId: nodeIdSchema, email: z.email().max(320), nickname: optionalText(255) })).min(1).max(1000),
});
export type ImportMembersInput = z.input<typeof importMembersSchema>;

export const requestApprovalSchema = z.object({ portalNetworkId: z.uuid(), deviceId: z.uuid().optional(), justification: optionalText(2000) });
export type RequestApprovalInput = z.input<typeof requestApprovalSchema>;
export const assignApprovalSchema = z.object({ targetUserId: z.uuid(), portalNetworkId: z.uuid(), justification: optionalText(2000) });
export type AssignApprovalInput = z.input<typeof assignApprovalSchema>;
export const decideSchema = z.object({ reason: optionalText(2000) });
export type DecideInput = z.input<typeof decideSchema>;
export const pendingQuerySchema = z.object({ networkId: z.uuid().optional() });
export type PendingQueryInput = z.input<typeof pendingQuerySchema>;

export const activateSchema = z.object({ lifetimeMinutes: minutes.optional() });
export type ActivateInput = z.input<typeof activateSchema>;
export const killSwitchSchema = z
  .object({
    targetUserId: z.uuid(),
    scope: z.enum(["organization", "global", "selected_networks"]).default("organization"),
    reason: optionalText(2000),
    networkIds: z.array(z.uuid()).max(100).optional(),
  })
  .refine((v) => v.scope !== "selected_networks" || (v.networkIds?.length ?? 0) > 0, { path: ["networkIds"], message: "name at least one network" });
export type KillSwitchInput = z.input<typeof killSwitchSchema>;
