import { and, eq, sql } from "drizzle-orm";
import { passwordCredentials, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { preparedQuery } from "../../infra/prepared.js";
import { live } from "../../infra/soft-delete.js";
import { userColumns, type UserRow } from "../users/index.js";
import { mfaMethodCounts, toMfaMethods, type MfaMethods } from "./mfa/mfa.repository.js";

/**
 * Privileged (ARCHITECTURE rule 7): the only reads of password hashes. Imported by the credentials
 * service alone (eslint.config.js enforces it); the writes, which return no hash, are in
 * credentials.repository.ts.
 */
const findHash = preparedQuery("password_hash_of_user", (db) =>
  db.select({ hash: passwordCredentials.passwordHash }).from(passwordCredentials).where(eq(passwordCredentials.userId, sql.placeholder("userId"))),
);

// A password sign-in's one read: the live account with this address, its password hash (null
// without a password) and its MFA method counts (userAccounts.findByEmail, findHash and
// mfaRepository.methods together).
const findSignIn = preparedQuery("sign_in_by_email", (db) =>
  db
    .select({ ...userColumns, hash: passwordCredentials.passwordHash, ...mfaMethodCounts })
    .from(users)
    .leftJoin(passwordCredentials, eq(passwordCredentials.userId, users.id))
    .where(and(eq(users.email, sql.placeholder("email")), live(users))),
);

export const credentialsSecretsRepository = {
  async findSignIn(db: Executor, email: string): Promise<{ user: UserRow; hash: string | undefined; mfa: MfaMethods } | undefined> {
    const [row] = await findSignIn(db, { email });
    if (!row) return undefined;
    const { hash, webauthn, totp, backupCodes, ...user } = row;
    return { user, hash: hash ?? undefined, mfa: toMfaMethods({ webauthn, totp, backupCodes }) };
  },

  async findPasswordHash(db: Executor, userId: string): Promise<string | undefined> {
    const [row] = await findHash(db, { userId });
    return row?.hash;
  },
};
