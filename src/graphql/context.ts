import type { Request, Response } from "express";
import type { Config } from "../config/index.js";
import type { RequestContext } from "../lib/request-context.js";

export interface GqlContext {
  ctx: RequestContext;
  /** Session token the request authenticated with (for logout and token hand-off). */
  sessionToken: string | null;
  req: Request;
  res: Response;
  config: Config;
}
