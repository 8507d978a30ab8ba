import type { RequestContext } from "../lib/request-context.js";
import type { SessionAuth } from "../infra/session-store.js";

declare module "express-serve-static-core" {
  interface Request {
    requestId: string;
    /** The resolved caller; set by the context middleware. */
    ctx: RequestContext;
    /** The session token this request authenticated with (bearer or cookie), if any. */
    sessionToken: string | null;
    /** How the session token arrived: cookie-authenticated writes need the same-origin check. */
    authVia: "bearer" | "cookie" | null;
  }
}

declare module "express-session" {
  interface SessionData {
    auth?: SessionAuth;
  }
}

export {};
