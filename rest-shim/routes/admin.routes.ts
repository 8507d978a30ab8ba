import type { Services } from "../../src/container.js";
import { suspendSchema } from "../../src/modules/users/users.schemas.js";
import { sendData } from "../envelope.js";
import { input, type RouteDef } from "../route.js";

export const adminRoutes = (s: Services): RouteDef[] => [
  {
    method: "post", path: "/admin/users/:userId/suspend", tag: "admin", auth: "superadmin", body: suspendSchema,
    summary: "Suspend an account: its sessions end at once and sign-in is refused",
    handle: async (req, res) =>
      sendData(res, 200, "User suspended", { user: await s.adminUsers.suspend(req.ctx, String(req.params.userId), input(req)) }),
  },
  {
    method: "post", path: "/admin/users/:userId/unsuspend", tag: "admin", auth: "superadmin", summary: "Lift a suspension",
    handle: async (req, res) =>
      sendData(res, 200, "User unsuspended", { user: await s.adminUsers.unsuspend(req.ctx, String(req.params.userId)) }),
  },
];
