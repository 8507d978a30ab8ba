import { z } from "zod";
import type { Services } from "../../src/container.js";
import { offboardSchema, receiptsQuerySchema } from "../../src/modules/offboarding/index.js";
import { sendData } from "../envelope.js";
import { input, param, queryInput, type RouteDef } from "../route.js";
import { paged } from "../views/same-shape.js";
import { offboardingReceiptView, reinstateView } from "../views/offboarding.js";

const O = "/organizations/:orgId";

export const offboardingRoutes = (s: Services): RouteDef[] => [
  {
    method: "post", path: `${O}/members/:userId/offboard`, data: z.object({ receipt: offboardingReceiptView }), tag: "members", auth: "user", org: "admin", body: offboardSchema, status: 201,
    errors: { 400: "Yourself (BAD_REQUEST)", 403: "An owner by a non-owner, the last owner (OWNER_REQUIRED), an account above your reach" },
    summary: "Offboard a member in one step (mode suspend or remove): sessions and CLI tokens of a managed account end, SSH certificates go into the KRL, devices are deauthorized, API keys they created are revoked, departments and principals are removed; answers the receipt",
    handle: async (req, res) => sendData(res, 201, "Offboarded", { receipt: await s.offboarding.offboard(req.ctx, param(req, "orgId"), param(req, "userId"), input(req)) }),
  },
  {
    method: "post", path: `${O}/members/:userId/reinstate`, data: z.object({ reinstatement: reinstateView }), tag: "members", auth: "user", org: "admin",
    errors: { 400: "Yourself (BAD_REQUEST)", 409: "Not suspended here (NOT_SUSPENDED)" },
    summary: "Lift a suspension: the membership comes back with its role, departments and principals (revoked credentials stay revoked)",
    handle: async (req, res) => sendData(res, 200, "Reinstated", { reinstatement: await s.offboarding.reinstate(req.ctx, param(req, "orgId"), param(req, "userId")) }),
  },
  {
    method: "get", path: `${O}/offboardings`, data: paged("offboardings", offboardingReceiptView), tag: "members", auth: "user", org: "admin", query: receiptsQuerySchema,
    summary: "Offboarding receipts, newest first (?user_id=&page=&per_page=)",
    handle: async (req, res) => {
      const { items, ...page } = await s.offboarding.receipts(req.ctx, param(req, "orgId"), queryInput(req));
      sendData(res, 200, "Offboardings", { offboardings: items, ...page });
    },
  },
  {
    method: "get", path: `${O}/offboardings/:receiptId`, data: z.object({ receipt: offboardingReceiptView }), tag: "members", auth: "user", org: "admin",
    summary: "One offboarding receipt, by its id or its audit record's id",
    handle: async (req, res) => sendData(res, 200, "Offboarding receipt", { receipt: await s.offboarding.receipt(req.ctx, param(req, "orgId"), param(req, "receiptId")) }),
  },
];
