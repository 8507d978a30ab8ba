import { and, eq, sql } from "drizzle-orm";
import { users } from "../../../schema/index.js";
import type { Db } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";

export interface OidcAccountRow {
  userId: string;
  email: string;
  verifiedAt: Date | null;
  name: string | null;
  updatedAt: Date;
}

/**
 * The people the provider may issue tokens for: active, not deleted users, with only the columns
 * their claims need (no credential). Read on every token the provider issues: prepared once.
 */
export function prepareActiveAccount(db: Db): { execute(v: { id: string }): Promise<OidcAccountRow[]> } {
  return db
    .select({ userId: users.id, email: users.email, verifiedAt: users.emailVerifiedAt, name: users.fullName, updatedAt: users.updatedAt })
    .from(users)
    .where(and(eq(users.id, sql.placeholder("id")), eq(users.status, "active"), live(users)))
    .prepare("oidc_account_find");
}
