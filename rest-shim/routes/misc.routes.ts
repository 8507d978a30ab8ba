import type { Services } from "../../src/container.js";
import { ContactSchema } from "../../src/modules/contact/contact.service.js";
import { outboxListSchema } from "../../src/modules/email/outbox-admin.service.js";
import { sendData } from "../envelope.js";
import { input, param, queryInput, type RouteDef } from "../route.js";

/** The public contact form and the superadmin view of the email outbox. */
export const miscRoutes = (s: Services): RouteDef[] => [
  {
    method: "post", path: "/contact", data: null, tag: "contact", auth: "none", body: ContactSchema,
    summary: "Send a message to the operators (5 per hour per client address)",
    handle: async (req, res) => sendData(res, 200, (await s.contact.submit(req.ctx, input(req))).message),
  },
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
