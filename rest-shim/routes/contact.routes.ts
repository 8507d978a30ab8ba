import type { Services } from "../../src/container.js";
import { ContactSchema } from "../../src/modules/contact/index.js";
import { sendData } from "../envelope.js";
import { input, type RouteDef } from "../route.js";

/** The public contact form. */
export const contactRoutes = (s: Services): RouteDef[] => [
  {
    method: "post", path: "/contact", data: null, tag: "contact", auth: "none", body: ContactSchema,
    summary: "Send a message to the operators (5 per hour per client address)",
    handle: async (req, res) => sendData(res, 200, (await s.contact.submit(req.ctx, input(req))).message),
  },
];
