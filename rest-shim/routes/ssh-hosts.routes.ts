import type { Services } from "../../src/container.js";
import { z } from "zod";
import { createEnrollmentTokenSchema, enrollHostSchema, renewChallengeSchema, renewHostSchema, retireHostSchema, setHostPrincipalsSchema } from "../../src/modules/ssh-hosts/index.js";
import { sendData, sendList } from "../envelope.js";
import { input, param, type RouteDef } from "../route.js";

const T = "/organizations/:orgId/ssh/host-enrollment-tokens";
const H = "/organizations/:orgId/ssh/hosts";
const P = "/organizations/:orgId/ssh/host-principals";
const hostsQuery = z.object({ include_retired: z.enum(["true", "false"]).optional() });

/** Enrolled servers: one-time enrollment tokens (admins), enrollment and renewal (the host itself), the host list and retirement (admins). */
export const sshHostsRoutes = (s: Services): RouteDef[] => [
  {
    method: "post", path: T, tag: "ssh-hosts", auth: "user", org: "admin", body: createEnrollmentTokenSchema, status: 201,
    summary: "Create a one-time enrollment token for a host (names it may be certified for; lifetime_minutes, 60 unless said, at most 1440); the token is shown once",
    handle: async (req, res) => sendData(res, 201, "Enrollment token created", { enrollmentToken: await s.hostEnrollment.createToken(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "get", path: T, tag: "ssh-hosts", auth: "user", org: "admin", summary: "The organization's enrollment tokens (never their secret), newest first, with their status",
    handle: async (req, res) => sendList(res, 200, "Enrollment tokens", "enrollmentTokens", await s.hostEnrollment.listTokens(req.ctx, param(req, "orgId"))),
  },
  {
    method: "delete", path: `${T}/:tokenId`, errors: { 409: "Already used or revoked (ENROLLMENT_TOKEN_CLOSED)" }, tag: "ssh-hosts", auth: "user", org: "admin", summary: "Revoke an unused enrollment token",
    handle: async (req, res) => sendData(res, 200, "Enrollment token revoked", { enrollmentToken: await s.hostEnrollment.revokeToken(req.ctx, param(req, "orgId"), param(req, "tokenId")) }),
  },
  {
    method: "get", path: H, tag: "ssh-hosts", auth: "user", org: "admin", query: hostsQuery, summary: "Enrolled hosts: names, host keys, certificate serials and expiry, last renewal (?include_retired=true)",
    handle: async (req, res) => sendList(res, 200, "Hosts", "hosts", await s.hostRenewal.list(req.ctx, param(req, "orgId"), { includeRetired: req.query.include_retired === "true" })),
  },
  {
    method: "get", path: P, tag: "ssh-hosts", auth: "user", org: "admin", summary: "Per-host principals: which certificate principals may log in as which local account on the hosts a pattern matches (AuthorizedPrincipalsFile)",
    handle: async (req, res) => sendList(res, 200, "Host principals", "hostPrincipals", await s.hostPrincipals.list(req.ctx, param(req, "orgId"))),
  },
  {
    method: "put", path: P, errors: { 409: "The organization has the most mappings it may have (HOST_PRINCIPAL_MAPS_LIMIT)" }, tag: "ssh-hosts", auth: "user", org: "admin", body: setHostPrincipalsSchema,
    summary: "Set the principals that may log in as `login` on the hosts `host_pattern` matches (created or replaced whole); hosts write it at their next enroll or renew",
    handle: async (req, res) => sendData(res, 200, "Host principals set", { hostPrincipals: await s.hostPrincipals.set(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "delete", path: `${P}/:mapId`, errors: { 404: "No such mapping in this organization (HOST_PRINCIPAL_MAP_NOT_FOUND)" }, tag: "ssh-hosts", auth: "user", org: "admin", summary: "Remove a per-host principals mapping",
    handle: async (req, res) => sendData(res, 200, "Host principals removed", { hostPrincipals: await s.hostPrincipals.remove(req.ctx, param(req, "orgId"), param(req, "mapId")) }),
  },
  {
    method: "post", path: `${H}/:hostId/retire`, errors: { 409: "Already retired (ALREADY_RETIRED)" }, tag: "ssh-hosts", auth: "user", org: "admin", body: retireHostSchema,
    summary: "Retire a host: it can no longer renew and its host certificates are revoked (the KRL is rebuilt)",
    handle: async (req, res) => sendData(res, 200, "Host retired", { host: await s.hostRenewal.retire(req.ctx, param(req, "orgId"), param(req, "hostId"), input(req)) }),
  },
  {
    method: "post", path: "/ssh/hosts/enroll", tag: "ssh-hosts", auth: "none", body: enrollHostSchema, status: 201,
    errors: {
      401: "Unknown token (ENROLLMENT_TOKEN_INVALID)",
      403: "The token is another organization's than organization_id (ENROLLMENT_TOKEN_FOREIGN), or a name it does not allow (HOST_NAME_NOT_ALLOWED)",
      404: "The organization has no host CA (CA_NOT_CONFIGURED)",
      409: "The token was already used (ENROLLMENT_TOKEN_USED)",
      410: "The token expired or was revoked, or its creator no longer administers the organization (ENROLLMENT_TOKEN_EXPIRED, ENROLLMENT_TOKEN_REVOKED, ENROLLMENT_TOKEN_CREATOR_GONE)",
      500: "Signing failed (SIGNING_FAILED)",
    },
    summary: "A host spends its enrollment token: its host public keys are certified for its names; answers the certificates, the TrustedUserCAKeys lines and the KRL's path",
    handle: async (req, res) => sendData(res, 201, "Host enrolled", await s.hostEnrollment.enroll(req.ctx, input(req))),
  },
  {
    method: "post", path: "/ssh/hosts/renew/challenge", errors: { 403: "The host is retired (HOST_RETIRED)", 404: "No such host (HOST_NOT_FOUND)" }, tag: "ssh-hosts", auth: "none", body: renewChallengeSchema,
    summary: "A challenge for an enrolled host to sign with one of its host keys (`ssh-keygen -Y sign -n keyward-host-renew`), valid 5 minutes",
    handle: async (req, res) => sendData(res, 200, "Sign the challenge", await s.hostRenewal.renewChallenge(req.ctx, input(req))),
  },
  {
    method: "post", path: "/ssh/hosts/renew", tag: "ssh-hosts", auth: "none", body: renewHostSchema,
    errors: { 403: "The signature is not by one of the host's enrolled keys (RENEW_PROOF_INVALID), or the host is retired (HOST_RETIRED)", 404: "No such host (HOST_NOT_FOUND)", 500: "Signing failed (SIGNING_FAILED)" },
    summary: "Renew a host's certificates with proof of its current host key: new ones inside the renewal window (the last third of their lifetime) or with force; always the current trust files",
    handle: async (req, res) => sendData(res, 200, "Host certificates", await s.hostRenewal.renew(req.ctx, input(req))),
  },
];
