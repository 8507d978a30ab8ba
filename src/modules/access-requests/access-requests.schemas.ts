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
 * A principal or a department (name or id: one of the two), for how long (`duration_minutes`, or
 * `duration` like "2h"), and why.
 */
export const requestAccessSchema = z
  .object({ principal: z.string().trim().min(1).max(255).optional(), department: z.string().trim().min(1).max(255).optional(), reason: reasonText, ...durationFields })
  .refine((v) => (v.principal === undefined) !== (v.department === undefined), { message: "say what you ask for: principal or department (one of them)", path: ["principal"] })
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

export const listRequestsSchema = z.object({ state: z.enum(["pending", "approved", "rejected", "cancelled", "expired"]).optional() });
export type ListRequestsInput = z.input<typeof listRequestsSchema>;
