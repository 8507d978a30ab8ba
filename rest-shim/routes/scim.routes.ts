import { z } from "zod";
import type { Services } from "../../src/container.js";
import { sendData } from "../envelope.js";
import { param, type RouteDef } from "../route.js";
import { scimActivityView } from "../views/scim.js";

export const scimRoutes = (s: Services): RouteDef[] => [
  {
    method: "get", path: "/organizations/:orgId/scim/activity", data: z.object({ scim: scimActivityView }), tag: "scim", auth: "user", org: "admin",
    summary: "SCIM provisioning: the base URL for the identity provider and each SCIM key's last request, last successful write and last error",
    handle: async (req, res) => sendData(res, 200, "SCIM activity", { scim: await s.scimActivity.forOrganization(req.ctx, param(req, "orgId")) }),
  },
];
