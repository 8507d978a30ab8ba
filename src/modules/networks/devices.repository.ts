import { and, asc, eq } from "drizzle-orm";
import { devices } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";
import { live } from "../../infra/soft-delete.js";
import { deviceColumns, type DeviceRow } from "./networks.repository.js";

/** People's registered devices. */
export const devicesRepository = {
  devicesOfUser: async (db: Executor, orgId: string, userId: string): Promise<DeviceRow[]> =>
    db.select(deviceColumns).from(devices).where(and(eq(devices.organizationId, orgId), eq(devices.userId, userId), live(devices))).orderBy(asc(devices.createdAt)),

  device: async (db: Executor, orgId: string, id: string): Promise<DeviceRow | undefined> =>
    (await db.select(deviceColumns).from(devices).where(and(idInOrg(devices, orgId, id), live(devices))))[0],

  /** The live device, locked until the transaction ends: joining networks and removal queue on it. */
  lockDevice: async (db: Executor, orgId: string, id: string): Promise<DeviceRow | undefined> =>
    (await db.select(deviceColumns).from(devices).where(and(idInOrg(devices, orgId, id), live(devices))).for("no key update"))[0],

  deviceByNode: async (db: Executor, orgId: string, nodeId: string): Promise<DeviceRow | undefined> =>
    (await db.select(deviceColumns).from(devices).where(and(eq(devices.organizationId, orgId), eq(devices.nodeId, nodeId), live(devices))))[0],

  async insertDevice(db: Executor, v: typeof devices.$inferInsert): Promise<DeviceRow> {
    const [row] = await db.insert(devices).values(v).returning(deviceColumns);
    return row!;
  },

  async updateDevice(db: Executor, id: string, v: Partial<typeof devices.$inferInsert>): Promise<DeviceRow> {
    const [row] = await db.update(devices).set(v).where(eq(devices.id, id)).returning(deviceColumns);
    return row!;
  },
};
