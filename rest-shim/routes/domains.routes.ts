import type { Services } from "../../src/container.js";
import { addDomainSchema } from "../../src/modules/domains/index.js";
import { sendData, sendList } from "../envelope.js";
import { input, param, type RouteDef } from "../route.js";
import { data } from "../views/index.js";

const D = "/organizations/:orgId/domains";

/** Verified domains (issue 35): an organization's owners and admins, and superadmins. */
export const domainsRoutes = (s: Services): RouteDef[] => [
  {
    method: "get", path: D, data: data.domains, tag: "domains", auth: "user", org: "admin", summary: "The organization's domains, each with its status and TXT record",
    handle: async (req, res) => sendList(res, 200, "Domains", "domains", await s.domains.list(req.ctx, param(req, "orgId"))),
  },
  {
    method: "post", path: D, data: data.domain, tag: "domains", auth: "user", org: "admin", body: addDomainSchema, status: 201,
    errors: { 409: "The organization already has this domain (DOMAIN_EXISTS)" },
    summary: "Claim a domain: the answer names the TXT record that proves it (public suffixes, IP addresses and consumer mail domains are refused: DOMAIN_NOT_CLAIMABLE)",
    handle: async (req, res) => sendData(res, 201, "Domain added: publish the TXT record, then verify", { domain: await s.domains.add(req.ctx, param(req, "orgId"), input(req)) }),
  },
  {
    method: "post", path: `${D}/:domainId/verify`, data: data.domain, tag: "domains", auth: "user", org: "admin",
    errors: { 409: "Another organization holds the domain verified (DOMAIN_ALREADY_VERIFIED)", 429: "Too many lookups for the organization (RATE_LIMIT_EXCEEDED)" },
    summary: "Look the TXT record up now: verified when found, otherwise unchanged with the reason in last_check_error",
    handle: async (req, res) => sendData(res, 200, "Domain checked", { domain: await s.domains.verify(req.ctx, param(req, "orgId"), param(req, "domainId")) }),
  },
  {
    method: "delete", path: `${D}/:domainId`, data: data.domain, tag: "domains", auth: "user", org: "admin", summary: "Remove a domain (its addresses no longer route to the organization)",
    handle: async (req, res) => sendData(res, 200, "Domain removed", { domain: await s.domains.remove(req.ctx, param(req, "orgId"), param(req, "domainId")) }),
  },
];
