import { and, desc, eq, gt, inArray, isNull, or, sql } from "drizzle-orm";
import { caKeys, certificateAuthorities, organizations } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";
import { live } from "../../infra/soft-delete.js";
import { preparedQuery } from "../../infra/prepared.js";

export const caColumns = pickColumns(certificateAuthorities, ["id", "organizationId", "name", "description", "caType", "defaultValidityHours", "maxValidityHours", "hostPatterns", "createdAt", "updatedAt"]);
export type CaRow = Pick<typeof certificateAuthorities.$inferSelect, keyof typeof caColumns>;

export const caKeyColumns = pickColumns(caKeys, ["id", "caId", "keyType", "publicKey", "fingerprint", "isActive", "rotatedAt", "trustedUntil", "createdAt"]);
export type CaKeyRow = Pick<typeof caKeys.$inferSelect, keyof typeof caKeyColumns>;

/** Every authority query goes through a live CA of a live organization. */
const liveCa = and(live(certificateAuthorities), sql`exists (select 1 from ${organizations} o where o.id = ${certificateAuthorities.organizationId} and o.deleted_at is null)`);

// Every signature reads its organization's CA and the CA's active key: prepared once.
const findByType = preparedQuery("ca_find_by_type", (db) =>
  db
    .select(caColumns)
    .from(certificateAuthorities)
    .where(and(eq(certificateAuthorities.organizationId, sql.placeholder("orgId")), eq(certificateAuthorities.caType, sql.placeholder("caType")), liveCa)),
);
const findActiveKey = preparedQuery("ca_active_key", (db) =>
  db.select(caKeyColumns).from(caKeys).where(and(eq(caKeys.caId, sql.placeholder("caId")), eq(caKeys.isActive, true))),
);

export const caRepository = {
  listForOrg: (db: Executor, orgId: string): Promise<CaRow[]> =>
    db.select(caColumns).from(certificateAuthorities).where(and(eq(certificateAuthorities.organizationId, orgId), liveCa)).orderBy(certificateAuthorities.caType),

  async find(db: Executor, orgId: string, id: string): Promise<CaRow | undefined> {
    const [row] = await db.select(caColumns).from(certificateAuthorities).where(and(idInOrg(certificateAuthorities, orgId, id), liveCa));
    return row;
  },

  /**
   * The live CA, locked until the transaction ends (FOR NO KEY UPDATE: signatures, whose inserts
   * only reference it, go on): key rotations of one CA queue instead of both retiring the same key.
   */
  async lock(db: Executor, orgId: string, id: string): Promise<CaRow | undefined> {
    const [row] = await db.select(caColumns).from(certificateAuthorities).where(and(idInOrg(certificateAuthorities, orgId, id), liveCa)).for("no key update");
    return row;
  },

  async findByType(db: Executor, orgId: string, caType: "user" | "host"): Promise<CaRow | undefined> {
    const [row] = await findByType(db, { orgId, caType });
    return row;
  },

  /** Which of these organizations have a live CA of the type. */
  async orgsWithCa(db: Executor, orgIds: string[], caType: "user" | "host"): Promise<string[]> {
    if (orgIds.length === 0) return [];
    const rows = await db
      .select({ organizationId: certificateAuthorities.organizationId })
      .from(certificateAuthorities)
      .where(and(inArray(certificateAuthorities.organizationId, orgIds), eq(certificateAuthorities.caType, caType), liveCa));
    return rows.map((r) => r.organizationId);
  },

  async insert(db: Executor, v: typeof certificateAuthorities.$inferInsert): Promise<CaRow> {
    const [row] = await db.insert(certificateAuthorities).values(v).returning(caColumns);
    return row!;
  },

  async update(db: Executor, orgId: string, id: string, values: Partial<typeof certificateAuthorities.$inferInsert>): Promise<CaRow | undefined> {
    const [row] = await db
      .update(certificateAuthorities)
      .set(values)
      .where(and(idInOrg(certificateAuthorities, orgId, id), live(certificateAuthorities)))
      .returning(caColumns);
    return row;
  },

  async activeKey(db: Executor, caId: string): Promise<CaKeyRow | undefined> {
    const [row] = await findActiveKey(db, { caId });
    return row;
  },

  /** Keys servers should trust now: the active one, and retired ones still inside their overlap. */
  trustedKeys: (db: Executor, caIds: string[], now: Date): Promise<CaKeyRow[]> =>
    caIds.length === 0
      ? Promise.resolve([])
      : db
          .select(caKeyColumns)
          .from(caKeys)
          .where(and(inArray(caKeys.caId, caIds), or(eq(caKeys.isActive, true), gt(caKeys.trustedUntil, now))))
          .orderBy(caKeys.createdAt),

  async insertKey(db: Executor, v: typeof caKeys.$inferInsert): Promise<CaKeyRow> {
    const [row] = await db.insert(caKeys).values(v).returning(caKeyColumns);
    return row!;
  },

  async retireKey(db: Executor, keyId: string, v: { now: Date; trustedUntil: Date; reason?: string }) {
    await db.update(caKeys).set({ isActive: false, rotatedAt: v.now, trustedUntil: v.trustedUntil, rotationReason: v.reason }).where(eq(caKeys.id, keyId));
  },

  /** Ends the overlap of all but the `keep` newest retired keys still trusted: a CA publishes a bounded set. */
  async untrustOldest(db: Executor, caId: string, keep: number, now: Date): Promise<number> {
    const trusted = await db
      .select({ id: caKeys.id })
      .from(caKeys)
      .where(and(eq(caKeys.caId, caId), eq(caKeys.isActive, false), gt(caKeys.trustedUntil, now)))
      .orderBy(desc(caKeys.rotatedAt), desc(caKeys.createdAt));
    const ids = trusted.slice(keep).map((k) => k.id);
    if (ids.length > 0) await db.update(caKeys).set({ trustedUntil: now }).where(inArray(caKeys.id, ids));
    return ids.length;
  },

  async retireAllKeys(db: Executor, caId: string, now: Date) {
    await db.update(caKeys).set({ isActive: false, rotatedAt: now, trustedUntil: now }).where(and(eq(caKeys.caId, caId), isNull(caKeys.rotatedAt)));
  },
};
