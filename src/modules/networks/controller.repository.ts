import { eq } from "drizzle-orm";
import { networkControllers } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { controllerColumns, type ControllerRow } from "./networks.repository.js";

/** The organization's controller connection (the sealed token is read by controller.secrets.repository.ts only). */
export const controllerRepository = {
  controller: async (db: Executor, orgId: string): Promise<ControllerRow | undefined> =>
    (await db.select(controllerColumns).from(networkControllers).where(eq(networkControllers.organizationId, orgId)))[0],

  async upsertController(db: Executor, v: typeof networkControllers.$inferInsert): Promise<ControllerRow> {
    const [row] = await db
      .insert(networkControllers)
      .values(v)
      .onConflictDoUpdate({
        target: networkControllers.organizationId,
        set: { mode: v.mode, baseUrl: v.baseUrl, tokenSealed: v.tokenSealed, controllerAddress: v.controllerAddress, lastCheckedAt: v.lastCheckedAt, updatedBy: v.updatedBy, updatedAt: v.updatedAt },
      })
      .returning(controllerColumns);
    return row!;
  },

  deleteController: async (db: Executor, orgId: string): Promise<boolean> =>
    (await db.delete(networkControllers).where(eq(networkControllers.organizationId, orgId)).returning({ id: networkControllers.organizationId })).length > 0,
};
