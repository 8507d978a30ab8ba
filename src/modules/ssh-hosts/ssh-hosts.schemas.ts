import { z } from "zod";

/** A host name or address as a host certificate names it (patterns only where the operator allows them). */
export const hostName = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9.*?_:[\]-]+$/, "must be a host name or address");

export const createEnrollmentTokenSchema = z.object({
  names: z.array(hostName).min(1).max(64),
  /** Minutes the token stays usable: one hour unless said, a day at most. */
  lifetimeMinutes: z.number().int().min(1).max(1440).default(60),
  description: z.string().trim().max(500).optional(),
});
export type CreateEnrollmentTokenInput = z.input<typeof createEnrollmentTokenSchema>;

const hostKeyLine = z.string().trim().min(1).max(16_384);

export const enrollHostSchema = z.object({
  token: z.string().trim().min(1).max(200).regex(/^kwh_[A-Za-z0-9_-]+$/, "is not an enrollment token (kwh_…)"),
  hostKeys: z.array(hostKeyLine).min(1).max(8),
  /** A subset of the token's names (all of them when absent). */
  names: z.array(hostName).min(1).max(64).optional(),
  /** The organization the host expects (an already enrolled host's): a token of another one is refused. */
  organizationId: z.uuid().optional(),
});
export type EnrollHostInput = z.input<typeof enrollHostSchema>;

export const renewChallengeSchema = z.object({ hostId: z.uuid() });
export type RenewChallengeInput = z.input<typeof renewChallengeSchema>;

export const renewHostSchema = z.object({
  hostId: z.uuid(),
  challenge: z.string().min(1).max(1000),
  /** The SSHSIG (armored) of the challenge, namespace keyward-host-renew, by one of the host's enrolled keys. */
  signature: z.string().min(1).max(16_384),
  /** Renew even outside the renewal window (the last third of the certificates' lifetime). */
  force: z.boolean().optional(),
});
export type RenewHostInput = z.input<typeof renewHostSchema>;

export const retireHostSchema = z.object({ reason: z.string().trim().max(1000).optional() });
export type RetireHostInput = z.input<typeof retireHostSchema>;

/** A local account on the host (as useradd accepts it; it also names the principals file). */
const login = z
  .string()
  .trim()
  .min(1)
  .max(32)
  .regex(/^[a-z_][a-z0-9_-]*$/, "must be a local account name (lower-case letters, digits, '_' and '-')");

/** A certificate principal (one line of an AuthorizedPrincipalsFile: no spaces, no options). */
const principal = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .regex(/^[A-Za-z0-9._@-]+$/, "may contain letters, digits, '.', '_', '@' and '-'");

export const setHostPrincipalsSchema = z.object({
  /** The hosts it applies to: a name, or a pattern with `*` and `?` matched against each of a host's names. */
  hostPattern: hostName,
  login,
  /** The principals a certificate must carry (one of) to log in as `login` there. */
  principals: z.array(principal).min(1).max(64),
});
export type SetHostPrincipalsInput = z.input<typeof setHostPrincipalsSchema>;
