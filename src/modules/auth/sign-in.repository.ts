import { and, eq, sql } from "drizzle-orm";
import { users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { preparedQuery, setPlaceholder } from "../../infra/prepared.js";
import { live } from "../../infra/soft-delete.js";
import { auditInsertWhenAs, auditRowsJson, type AuditRow } from "../audit/index.js";
import { noteProfileChanged, userColumns, type UserRow } from "../users/index.js";

// The end of every sign-in: the account's last sign-in and the "user.login" record, in one
// prepared statement (one transaction of its own, without BEGIN and COMMIT round trips). The
// record is written only with the update: an account deleted or suspended since its credentials were
// checked is not signed in, and no record says it was; nor is one whose password changed since.
// A password sign-in also needs the password it checked to be the account's still: one changed or
// reset meanwhile (which ended every session) ends this sign-in too. Other sign-ins pass null. (A
// change that commits while this statement waits for the account's row is read as of the
// statement's start; it ends this sign-in's session all the same, by ending every session after it
// commits, which is after this session was created.)
const fingerprint = sql.placeholder("password_fp");
const passwordUnchanged = sql`(${fingerprint}::text is null or exists (select 1 from password_credentials pc
  where pc.user_id = ${users.id} and encode(sha256(convert_to(pc.password_hash, 'UTF8')), 'hex') = ${fingerprint}))`;
const recordSignIn = preparedQuery("users_record_sign_in", (db) => {
  const signedIn = db.$with("signed_in").as(
    db
      .update(users)
      .set({ lastLoginAt: setPlaceholder<Date>("now"), lastLoginIp: setPlaceholder<string | null>("ip") })
      .where(and(eq(users.id, sql.placeholder("userId")), eq(users.status, "active"), live(users), passwordUnchanged))
      .returning(userColumns),
  );
  return db.with(signedIn, auditInsertWhenAs(db, "audit", sql`exists (select 1 from signed_in)`)).select().from(signedIn);
});

export const signInRepository = {
  /**
   * Sets the last sign-in (time and address) and appends its audit record together; the account
   * as it now is, or undefined (and no record) when it is no longer live.
   */
  async recordSignIn(db: Executor, userId: string, v: { now: Date; ip: string | null; passwordFingerprint?: string }, audit: AuditRow): Promise<UserRow | undefined> {
    // The profile shows the last sign-in: caches hold the account until the change is announced.
    noteProfileChanged(userId);
    const [row] = await recordSignIn(db, { userId, now: v.now, ip: v.ip, password_fp: v.passwordFingerprint ?? null, audit_rows: auditRowsJson([audit]) });
    return row as UserRow | undefined;
  },
};
