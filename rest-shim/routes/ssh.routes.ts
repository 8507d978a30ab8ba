import type { Services } from "../../src/container.js";
import { Verbatim } from "../../src/lib/strings.js";
import { z } from "zod";
import { certAuditQuerySchema, certListSchema, createCaSchema, orgCertListSchema, revokeSchema, rotateCaSchema, signHostSchema, signUserSchema, sudoCheckSchema, updateCaSchema } from "../../src/modules/ssh-ca/index.js";
import { addKeySchema, describeKeySchema, verifyKeySchema } from "../../src/modules/ssh-keys/index.js";
import { sendData, sendList } from "../envelope.js";
import { input, param, queryInput, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

const K = "/ssh/keys/:keyId";
const CA = "/organizations/:orgId/cas";
// Query parameters the handlers read themselves (documentation: the services parse the values).
const orgQuery = z.object({ orgId: z.string().optional() });
const caQuery = z.object({ caType: z.enum(["user", "host"]).optional(), orgId: z.string().optional() });

/** SSH keys, certificates and certificate authorities (paths of the original CLI kept). */
export const sshRoutes = (s: Services): RouteDef[] => [
  {
    method: "get", path: "/ssh/keys", data: data.sshKeys, tag: "ssh", auth: "user", scope: "ssh:keys", summary: "Your SSH public keys",
    handle: async (req, res) => sendList(res, 200, "SSH keys", "keys", await s.sshKeys.list(req.ctx)),
  },
  {
    method: "post", path: "/ssh/keys", data: data.sshKey, tag: "ssh", auth: "user", scope: "ssh:keys", body: addKeySchema, status: 201, alsoStatus: [200],
    summary: "Register a public key (`key` or `public_key`): 201 when new, 200 with the existing key when already yours",
    handle: async (req, res) => {
      const { key, isNew } = await s.sshKeys.add(req.ctx, input(req));
      sendData(res, isNew ? 201 : 200, isNew ? "SSH key added" : "SSH key already registered", key);
    },
  },
  {
    method: "get", path: K, data: data.sshKey, tag: "ssh", auth: "user", scope: "ssh:keys", summary: "One of your keys",
    handle: async (req, res) => sendData(res, 200, "SSH key", await s.sshKeys.get(req.ctx, param(req, "keyId"))),
  },
  {
    method: "patch", path: K, data: data.sshKey, tag: "ssh", auth: "user", scope: "ssh:keys", body: describeKeySchema, summary: "Change a key's description",
    handle: async (req, res) => sendData(res, 200, "SSH key updated", await s.sshKeys.updateDescription(req.ctx, param(req, "keyId"), input(req))),
  },
  {
    method: "patch", path: `${K}/update-description`, data: data.sshKey, tag: "ssh", auth: "user", scope: "ssh:keys", body: describeKeySchema, summary: "Change a key's description (original path)",
    handle: async (req, res) => sendData(res, 200, "SSH key updated", await s.sshKeys.updateDescription(req.ctx, param(req, "keyId"), input(req))),
  },
  {
    method: "delete", path: K, data: data.sshKeyDeleted, tag: "ssh", auth: "user", scope: "ssh:keys", summary: "Delete one of your keys",
    handle: async (req, res) => {
      await s.sshKeys.delete(req.ctx, param(req, "keyId"));
      sendData(res, 200, "SSH key deleted", { status: "deleted" });
    },
  },
  {
    method: "get", path: `${K}/verify`, tag: "ssh", auth: "user", scope: "ssh:keys", summary: "A challenge to sign with `ssh-keygen -Y sign -n file`",
    handle: async (req, res) => {
      const c = await s.sshKeys.challenge(req.ctx, param(req, "keyId"));
      sendData(res, 200, "Sign the challenge text", new Verbatim({ challenge_text: c.challengeText, validationText: c.validationText, key_id: c.keyId }));
    },
  },
  {
    method: "post", path: `${K}/verify`, data: data.sshKeyVerified, tag: "ssh", auth: "user", scope: "ssh:keys", body: verifyKeySchema, summary: "Prove possession: the SSHSIG signature of the challenge (armored or base64)",
    handle: async (req, res) => sendData(res, 200, "SSH key verified", await s.sshKeys.verify(req.ctx, param(req, "keyId"), input(req))),
  },
  {
    method: "get", path: "/ssh/dept-cert-policy", errors: { 404: "org_id names no organization of yours (ORG_NOT_FOUND)" }, tag: "ssh", auth: "user", scope: "ssh:sign", query: orgQuery, summary: "The certificate policy you sign under (?org_id=)",
    handle: async (req, res) => sendData(res, 200, "Certificate policy", { policy: await s.signing.effectivePolicy(req.ctx, (req.query.org_id as string) || undefined) }),
  },
  {
    method: "post", path: "/ssh/sign", errors: { 403: "A principal you may not request (UNAUTHORIZED_PRINCIPALS), or a department policy refuses this key: it requires a security key, or one whose proof showed a touch or a PIN/biometric check (HARDWARE_KEY_REQUIRED, details.department and details.requirement: hardware_key, touch, verify)", 404: "The key or the organization does not exist for you (SSH_KEY_NOT_FOUND, ORG_NOT_FOUND), or it has no user CA yet: the message says how an admin creates one (CA_NOT_CONFIGURED)", 500: "Signing failed (SIGNING_FAILED)" }, data: data.signedCertificate, tag: "ssh", auth: "user", scope: "ssh:sign", body: signUserSchema, status: 201,
    summary: "Sign a user certificate for one of your keys (org_id selects the organization when you are in several)",
    handle: async (req, res) => sendData(res, 201, "Certificate issued", await s.signing.signUserCertificate(req.ctx, input(req))),
  },
  {
    method: "post", path: "/ssh/sign/host", errors: { 404: "The CA does not exist for you (CA_NOT_FOUND), or no host CA exists yet (CA_NOT_CONFIGURED)", 500: "Signing failed (SIGNING_FAILED)" }, data: data.signedCertificate, tag: "ssh", auth: "user", body: signHostSchema, status: 201, summary: "Sign a host certificate (organization admins)",
    handle: async (req, res) => sendData(res, 201, "Host certificate issued", await s.signing.signHostCertificate(req.ctx, input(req))),
  },
  {
    method: "get", path: "/ssh/certificates", data: data.certificates, tag: "ssh", auth: "user", scope: "ssh:sign", query: certListSchema, summary: "Your certificates",
    handle: async (req, res) => {
      const { items, ...page } = await s.certificates.listMine(req.ctx, queryInput(req));
      sendData(res, 200, "Certificates", { certificates: items, ...page });
    },
  },
  {
    method: "get", path: "/ssh/certificates/:certId", data: data.certificate, tag: "ssh", auth: "user", summary: "One certificate (yours, or of an organization you administer)",
    handle: async (req, res) => sendData(res, 200, "Certificate", { certificate: await s.certificates.get(req.ctx, param(req, "certId")) }),
  },
  {
    method: "post", path: "/ssh/certificates/:certId/revoke", errors: { 409: "Already revoked (ALREADY_REVOKED)" }, data: data.certificateRevoked, tag: "ssh", auth: "user", body: revokeSchema, summary: "Revoke a certificate (the KRL is rebuilt)",
    handle: async (req, res) => {
      const cert = await s.certificates.revoke(req.ctx, param(req, "certId"), input(req));
      sendData(res, 200, "Certificate revoked", { status: "revoked", certId: cert.id, reason: cert.revokeReason, certificate: cert });
    },
  },
  {
    method: "get", path: "/ssh/ca/public-key", errors: { 404: "No active CA of that type (CA_NOT_CONFIGURED)" }, tag: "ssh", auth: "user", scope: "ssh:sign", query: caQuery, summary: "The active CA public key (?ca_type=user|host&org_id=)",
    handle: async (req, res) =>
      sendData(res, 200, "CA public key", await s.cas.publicKey(req.ctx, { caType: req.query.ca_type as string | undefined, orgId: (req.query.org_id as string) || undefined })),
  },
  {
    method: "get", path: "/ssh/client-config", data: data.sshClientConfig, tag: "ssh", auth: "user", scope: "ssh:sign",
    summary: "For `keyward ssh config`: each of your organizations, whether it signs user certificates, and its host CA's patterns and known_hosts lines",
    handle: async (req, res) => sendData(res, 200, "SSH client configuration", await s.cas.clientConfig(req.ctx)),
  },
  {
    method: "get", path: CA, data: data.cas, tag: "ssh-ca", auth: "user", org: "admin", summary: "The organization's certificate authorities",
    handle: async (req, res) => sendList(res, 200, "Certificate authorities", "cas", await s.cas.list(req.ctx, param(req, "orgId"))),
  },
  {
    method: "post", path: CA, data: data.ca, tag: "ssh-ca", auth: "user", org: "admin", body: createCaSchema, status: 201,
    summary: "Create a CA (user or host; ed25519, ecdsa or rsa-4096); the private key never leaves the service",
    handle: async (req, res) => sendData(res, 201, "Certificate authority created", { ca: await s.cas.create(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "patch", path: `${CA}/:caId`, data: data.ca, tag: "ssh-ca", auth: "user", org: "admin", body: updateCaSchema, summary: "Change a CA's name, validity hours or (host CA) host_patterns (a pattern matching every host needs allow_any_host: true)",
    handle: async (req, res) => sendData(res, 200, "Certificate authority updated", { ca: await s.cas.update(req.ctx, param(req, "orgId"), param(req, "caId"), input(req)) }),
  },
  {
    method: "delete", path: `${CA}/:caId`, data: data.caDeleted, tag: "ssh-ca", auth: "user", org: "admin", summary: "Delete a CA (its keys stop being trusted)",
    handle: async (req, res) => {
      await s.cas.delete(req.ctx, param(req, "orgId"), param(req, "caId"));
      sendData(res, 200, "Certificate authority deleted", { caId: param(req, "caId") });
    },
  },
  {
    method: "post", path: `${CA}/:caId/rotate`, data: data.caRotated, tag: "ssh-ca", auth: "user", org: "admin", body: rotateCaSchema,
    summary: "Rotate the CA key; the previous key stays trusted for SSH_CA_ROTATION_OVERLAP_HOURS",
    handle: async (req, res) => sendData(res, 200, "Certificate authority rotated", await s.cas.rotate(req.ctx, param(req, "orgId"), param(req, "caId"), input(req))),
  },
  {
    method: "get", path: "/organizations/:orgId/ssh/ca-keys", tag: "ssh-ca", auth: "user", org: "guest",
    summary: "What servers trust: TrustedUserCAKeys lines and the known_hosts @cert-authority line",
    handle: async (req, res) => sendData(res, 200, "Server configuration", await s.cas.serverConfig(req.ctx, param(req, "orgId"))),
  },
  {
    method: "get", path: "/organizations/:orgId/ssh/krl", tag: "ssh-ca", auth: "none", produces: "application/octet-stream",
    summary: "The organization's key revocation list (OpenSSH KRL, binary) for sshd's RevokedKeys",
    handle: async (req, res) => {
      const { krl, version, generatedAt } = await s.certificates.krl(param(req, "orgId"));
      res.setHeader("X-KRL-Version", version.toString());
      res.setHeader("Last-Modified", generatedAt.toUTCString());
      res.type("application/octet-stream").send(krl);
    },
  },
  {
    method: "get", path: "/organizations/:orgId/certificates", data: data.certificates, tag: "ssh-ca", auth: "user", org: "admin", query: orgCertListSchema, summary: "Certificates issued in the organization (?user_id=&principal=&status=active|expired|revoked&cert_type=user|host)",
    handle: async (req, res) => {
      const { items, ...page } = await s.certificates.listForOrg(req.ctx, param(req, "orgId"), queryInput(req));
      sendData(res, 200, "Certificates", { certificates: items, ...page });
    },
  },
  {
    method: "get", path: "/organizations/:orgId/certificates/audit", tag: "ssh-ca", auth: "user", org: "admin", query: certAuditQuerySchema, summary: "The certificate audit log (?action=issued|failed|revoked)",
    handle: async (req, res) => {
      const { items, ...page } = await s.certificates.auditLog(req.ctx, param(req, "orgId"), queryInput(req));
      sendData(res, 200, "Certificate audit log", { entries: items.map((e) => ({ ...e, metadata: new Verbatim(e.metadata) })), count: items.length, ...page });
    },
  },
  {
    method: "post", path: "/organizations/:orgId/users/:userId/certificates/revoke", tag: "ssh-ca", auth: "user", org: "admin", body: revokeSchema,
    summary: "Revoke every certificate of a user in the organization",
    handle: async (req, res) => sendData(res, 200, "Certificates revoked", await s.certificates.revokeUser(req.ctx, param(req, "orgId"), param(req, "userId"), input(req))),
  },
  {
    method: "post", path: "/sudo/check", errors: { 401: "No organization API key (AUTH_REQUIRED), the key in the body is unknown or revoked (UNAUTHORIZED), or the bearer key is (INVALID_TOKEN)", 404: "No certificate with this serial in the key's organization (NOT_FOUND)" }, tag: "ssh", auth: "none", apiKey: "ssh:sudo", body: sudoCheckSchema,
    summary: "May the user behind a certificate sudo? (the organization API key as the bearer, or as api_key in the body)",
    handle: async (req, res) => sendData(res, 200, "Sudo check", await s.sudo.check(req.ctx, input(req))),
  },
];
