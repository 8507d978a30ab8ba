import type { Services } from "../../src/container.js";
import { outboxListSchema } from "../../src/modules/email/index.js";
import { sendData } from "../envelope.js";
import { param, queryInput, type RouteDef } from "../route.js";

/** The operators' view of the email outbox. */
export const emailRoutes = (s: Services): RouteDef[] => [
  {
    method: "get", path: "/superadmin/emails", tag: "superadmin", auth: "superadmin", query: outboxListSchema, summary: "The email outbox (?status=pending|sent|failed|dead)",
    handle: async (req, res) => {
      const { items, ...page } = await s.outbox.list(req.ctx, queryInput(req));
      sendData(res, 200, "Outbox", { emails: items, ...page });
    },
  },
  {
    method: "post", path: "/superadmin/emails/:emailId/retry", tag: "superadmin", auth: "superadmin", summary: "Queue a dead or failed message again",
    handle: async (req, res) => sendData(res, 200, "Message queued again", await s.outbox.retry(req.ctx, param(req, "emailId"))),
  },
];
