import { eq } from "drizzle-orm";
import { networkControllers } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";

/**
 * Privileged (ARCHITECTURE rule 7): the organization's controller connection with its sealed API
 * token, the only read of `network_controllers.token_sealed`. Only ControllerConfigService.clientFor
 * imports this; it unseals the token into a controller client and never returns it.
 */
export async function readControllerConnectionPrivileged(db: Executor, orgId: string): Promise<{ mode: "controller" | "central"; baseUrl: string; tokenSealed: string } | undefined> {
  const [row] = await db
    .select({ mode: networkControllers.mode, baseUrl: networkControllers.baseUrl, tokenSealed: networkControllers.tokenSealed })
    .from(networkControllers)
    .where(eq(networkControllers.organizationId, orgId));
  return row;
}
