import { z } from "zod";

/** The longest grant anyone can ask for or a policy can allow: 30 days. */
export const MAX_MINUTES = 30 * 24 * 60;

/** "2h", "90m", "1h30m", "1d", or a plain number of minutes: the minutes, or null when unreadable. */
export function parseDuration(text: string): number | null {
  const s = text.trim().toLowerCase();
  if (/^\d+$/.test(s)) return Number(s);
  const m = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$/.exec(s);
  if (!m || s === "") return null;
  return Number(m[1] ?? 0) * 1440 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

const minutes = z.number().int().min(1).max(MAX_MINUTES);
const duration = z
  .string()
  .max(20)
  .transform((v, c) => {
    const n = parseDuration(v);
    if (n === null || n < 1 || n > MAX_MINUTES) {
      c.addIssue({ code: "custom", message: `a duration like 30m, 2h, 1h30m or 1d, at most ${MAX_MINUTES / 1440} days` });
      return z.NEVER;
    }
    return n;
  });
const reasonText = z.string().trim().min(1, "say why").max(2000);

const durationFields = { durationMinutes: minutes.optional(), duration: duration.optional() };
const oneDuration = (v: { durationMinutes?: number; duration?: number }) => !(v.durationMinutes !== undefined && v.duration !== undefined);
const notBoth = { message: "give duration_minutes or duration, not both", path: ["duration"] };

/**
 * A principal, a department (name or id) or an organization role (one of the three), for how long (`duration_minutes`, or
 * `duration` like "2h"), and why.
 */
export const requestAccessSchema = z
  .object({
    principal: z.string().trim().min(1).max(255).optional(),
    department: z.string().trim().min(1).max(255).optional(),
    /** An organization role for the time (admin); owner is named only to be refused with its reason. */
    role: z.enum(["owner", "admin", "member", "guest"]).optional(),
    reason: reasonText,
    ...durationFields,
  })
  .refine((v) => [v.principal, v.department, v.role].filter((x) => x !== undefined).length === 1, { message: "say what you ask for: principal, department or role (one of them)", path: ["principal"] })
  .refine(oneDuration, notBoth)
  .refine((v) => v.durationMinutes !== undefined || v.duration !== undefined, { message: "say for how long: duration_minutes or duration (e.g. 2h)", path: ["duration"] })
  .transform(({ duration: d, durationMinutes, ...rest }) => ({ ...rest, minutes: (durationMinutes ?? d)! }));
export type RequestAccessInput = z.input<typeof requestAccessSchema>;

/** An approval may shorten the time asked for (absent: the time asked for). */
export const approveSchema = z
  .object({ reason: z.string().trim().max(2000).nullish(), ...durationFields })
  .refine(oneDuration, notBoth)
  .transform(({ duration: d, durationMinutes, ...rest }) => ({ ...rest, minutes: durationMinutes ?? d }));
export type ApproveInput = z.input<typeof approveSchema>;

export const rejectSchema = z.object({ reason: reasonText });

/** Ending a grant early: why (required, like a rejection). */
export const revokeSchema = z.object({ reason: reasonText });
export type RevokeInput = z.input<typeof revokeSchema>;
export type RejectInput = z.input<typeof rejectSchema>;

export const accessPolicySchema = z.object({
  requestable: z.boolean().default(true),
  /** Only members of this department may ask (null or absent: any member). */
  requesterDepartmentId: z.uuid().nullish(),
  maxDurationMinutes: minutes,
  approvalRequired: z.boolean().default(true),
});
export type AccessPolicyInput = z.input<typeof accessPolicySchema>;

/** The organization roles a policy can make requestable (never owner: ownership is transferred, not lent). */
export const REQUESTABLE_ROLES = ["admin", "member"] as const;
export type RequestableRole = (typeof REQUESTABLE_ROLES)[number];
export const roleParamSchema = z.enum(REQUESTABLE_ROLES, { message: "a role that can be requested: admin or member (never owner)" });

export const listRequestsSchema = z.object({ state: z.enum(["pending", "approved", "rejected", "cancelled", "expired"]).optional() });
export type ListRequestsInput = z.input<typeof listRequestsSchema>;
