import { and, eq, gt, isNull, lte } from "drizzle-orm";
import { orgInvites, organizations } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";
import { live } from "../../infra/soft-delete.js";
import type { OrgRole } from "../access/index.js";

const inviteColumns = pickColumns(orgInvites, ["id", "organizationId", "email", "role", "invitedBy", "expiresAt", "provisionsAccount", "createdAt"]);

export type InviteRow = Pick<typeof orgInvites.$inferSelect, keyof typeof inviteColumns>;

const open = and(isNull(orgInvites.acceptedAt), isNull(orgInvites.cancelledAt));

export const invitesRepository = {
  async insert(
    db: Executor,
    v: { organizationId: string; email: string; role: OrgRole; tokenHash: string; invitedBy: string; expiresAt: Date; provisionsAccount: boolean; now: Date },
  ): Promise<InviteRow> {
    const [row] = await db.insert(orgInvites).values({ ...v, createdAt: v.now }).returning(inviteColumns);
    return row!;
  },

  /** Open invites of an organization (expired ones included, flagged by their date). */
  listOpen: (db: Executor, organizationId: string): Promise<InviteRow[]> =>
    db.select(inviteColumns).from(orgInvites).where(and(eq(orgInvites.organizationId, organizationId), open)).orderBy(orgInvites.createdAt),

  async findOpenByEmail(db: Executor, organizationId: string, email: string): Promise<InviteRow | undefined> {
    const [row] = await db.select(inviteColumns).from(orgInvites).where(and(eq(orgInvites.organizationId, organizationId), eq(orgInvites.email, email), open));
    return row;
  },

  /** An open, unexpired invite by token hash, with its live organization's name. */
  async findUsableByHash(db: Executor, tokenHash: string, now: Date) {
    const [row] = await db
      .select({ ...inviteColumns, organizationName: organizations.name })
      .from(orgInvites)
      .innerJoin(organizations, eq(organizations.id, orgInvites.organizationId))
      .where(and(eq(orgInvites.tokenHash, tokenHash), open, gt(orgInvites.expiresAt, now), live(organizations)));
    return row;
  },

  /** Open, unexpired invites addressed to an email (for the invitee's own list). */
  listUsableForEmail: (db: Executor, email: string, now: Date) =>
    db
      .select({ ...inviteColumns, organizationName: organizations.name })
      .from(orgInvites)
      .innerJoin(organizations, eq(organizations.id, orgInvites.organizationId))
      .where(and(eq(orgInvites.email, email), open, gt(orgInvites.expiresAt, now), live(organizations))),

  async findUsableById(db: Executor, id: string, now: Date) {
    const [row] = await db
      .select({ ...inviteColumns, organizationName: organizations.name })
      .from(orgInvites)
      .innerJoin(organizations, eq(organizations.id, orgInvites.organizationId))
      .where(and(eq(orgInvites.id, id), open, gt(orgInvites.expiresAt, now), live(organizations)));
    return row;
  },

  /**
   * Marks an invite accepted. The conditional update is the single-use guard: of concurrent
   * accepts, exactly one gets the row back.
   */
  async markAccepted(db: Executor, id: string, userId: string, now: Date): Promise<boolean> {
    const rows = await db
      .update(orgInvites)
      .set({ acceptedAt: now, acceptedBy: userId })
      .where(and(eq(orgInvites.id, id), open, gt(orgInvites.expiresAt, now)))
      .returning({ id: orgInvites.id });
    return rows.length === 1;
  },

  async cancel(db: Executor, organizationId: string, id: string, now: Date): Promise<InviteRow | undefined> {
    const [row] = await db
      .update(orgInvites)
      .set({ cancelledAt: now })
      .where(and(idInOrg(orgInvites, organizationId, id), open))
      .returning(inviteColumns);
    return row;
  },

  /**
   * A new link and expiry for an open invite (expired ones included): the old link stops working.
   * The conditional update decides between a resend and a concurrent accept or cancel.
   */
  async renew(db: Executor, organizationId: string, id: string, v: { tokenHash: string; expiresAt: Date }): Promise<InviteRow | undefined> {
    const [row] = await db
      .update(orgInvites)
      .set({ tokenHash: v.tokenHash, expiresAt: v.expiresAt })
      .where(and(idInOrg(orgInvites, organizationId, id), open))
      .returning(inviteColumns);
    return row;
  },

  /** Closes every open invite of an organization (it is being deleted). */
  async cancelAllOpen(db: Executor, organizationId: string, now: Date): Promise<void> {
    await db.update(orgInvites).set({ cancelledAt: now }).where(and(eq(orgInvites.organizationId, organizationId), open));
  },

  /** The invitee turns an open invitation down: closed like a cancelled one, only when addressed to them. */
  async decline(db: Executor, id: string, email: string, now: Date): Promise<InviteRow | undefined> {
    const [row] = await db
      .update(orgInvites)
      .set({ cancelledAt: now })
      .where(and(eq(orgInvites.id, id), eq(orgInvites.email, email), open, gt(orgInvites.expiresAt, now)))
      .returning(inviteColumns);
    return row;
  },

  /** Closes an expired open invite so that the address can be invited again. */
  async cancelExpired(db: Executor, organizationId: string, email: string, now: Date) {
    await db
      .update(orgInvites)
      .set({ cancelledAt: now })
      .where(and(eq(orgInvites.organizationId, organizationId), eq(orgInvites.email, email), open, lte(orgInvites.expiresAt, now)));
  },
};
