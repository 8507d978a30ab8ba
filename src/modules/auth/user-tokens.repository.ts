import { and, eq, gt, inArray, isNull } from "drizzle-orm";
import { userTokens } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";

export type UserTokenPurpose = (typeof userTokens.purpose.enumValues)[number];

/** Email-link tokens: only their SHA-256 is stored, and each is consumed at most once. */
export const userTokensRepository = {
  async insert(db: Executor, v: { userId: string; purpose: UserTokenPurpose; tokenHash: string; expiresAt: Date; now: Date; newEmail?: string }) {
    await db
      .insert(userTokens)
      .values({ userId: v.userId, purpose: v.purpose, tokenHash: v.tokenHash, newEmail: v.newEmail ?? null, expiresAt: v.expiresAt, createdAt: v.now });
  },

  /**
   * The account a still-usable token of one of `purposes` belongs to, without taking the token: the
   * caller locks the account first, so concurrent links of one account queue on the account row
   * instead of deadlocking on each other's token rows.
   */
  async findUsableOwner(db: Executor, purposes: UserTokenPurpose[], tokenHash: string, now: Date): Promise<string | undefined> {
    const [row] = await db
      .select({ userId: userTokens.userId })
      .from(userTokens)
      .where(and(eq(userTokens.tokenHash, tokenHash), inArray(userTokens.purpose, purposes), isNull(userTokens.usedAt), gt(userTokens.expiresAt, now)));
    return row?.userId;
  },

  /**
   * Marks a valid token used and returns its user. The conditional update is the single-use guard:
   * of two concurrent requests with the same token, only one gets a row back.
   */
  async consume(db: Executor, purpose: UserTokenPurpose, tokenHash: string, now: Date): Promise<string | undefined> {
    const [row] = await db
      .update(userTokens)
      .set({ usedAt: now })
      .where(
        and(eq(userTokens.tokenHash, tokenHash), eq(userTokens.purpose, purpose), isNull(userTokens.usedAt), gt(userTokens.expiresAt, now)),
      )
      .returning({ userId: userTokens.userId });
    return row?.userId;
  },

  /**
   * The verification link of either kind (the same /verify-email page opens both): proving the
   * current address, or a new one (email_change, which carries the address it proves).
   */
  async consumeEmailLink(db: Executor, tokenHash: string, now: Date): Promise<Pick<typeof userTokens.$inferSelect, "userId" | "purpose" | "newEmail"> | undefined> {
    const [row] = await db
      .update(userTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(userTokens.tokenHash, tokenHash),
          inArray(userTokens.purpose, ["email_verification", "email_change"]),
          isNull(userTokens.usedAt),
          gt(userTokens.expiresAt, now),
        ),
      )
      .returning({ userId: userTokens.userId, purpose: userTokens.purpose, newEmail: userTokens.newEmail });
    return row;
  },

  /** Voids a user's outstanding tokens of one purpose (a new link replaces the old ones). */
  async voidAll(db: Executor, userId: string, purpose: UserTokenPurpose, now: Date) {
    await db
      .update(userTokens)
      .set({ usedAt: now })
      .where(and(eq(userTokens.userId, userId), eq(userTokens.purpose, purpose), isNull(userTokens.usedAt)));
  },
};
