import type { Executor } from "../../infra/db.js";
import { usersRepository, type EmailVerifiedVia, type NewUser, type UserRow } from "./users.repository.js";

/**
 * The users module's door for other modules: account records read and changed inside the caller's
 * own transaction (sign-up, activation, admin actions, membership changes all write an account row
 * in the same transaction as their own rows and audit record). Each change is a named operation
 * that keeps the profile cache told; no module writes an arbitrary column of `users`.
 */
export const userAccounts = {
  /** A live account. */
  find: (db: Executor, id: string): Promise<UserRow | undefined> => usersRepository.findById(db, id),
  /** A live account by its (normalised) address. */
  findByEmail: (db: Executor, email: string): Promise<UserRow | undefined> => usersRepository.findByEmail(db, email),
  /** Locks the account's row for the rest of the transaction; false when there is no live account. */
  lock: (db: Executor, id: string): Promise<boolean> => usersRepository.lockById(db, id),
  /** A soft-deleted account (an operator restoring it). */
  findDeleted: (db: Executor, id: string): Promise<UserRow | undefined> => usersRepository.findDeleted(db, id),
  search: usersRepository.search,
  /** Names by id, deleted accounts included (an audit record outlives its subject). */
  namesByIds: usersRepository.namesByIds,

  create: (db: Executor, values: NewUser & { now: Date }): Promise<UserRow> => usersRepository.insert(db, values),
  markEmailVerified: (db: Executor, user: UserRow, via: EmailVerifiedVia, now: Date): Promise<UserRow> => usersRepository.markEmailVerified(db, user, via, now),
  /** The owner proved a new address by the link mailed to it. */
  changeEmail: (db: Executor, id: string, email: string, now: Date): Promise<UserRow | undefined> =>
    usersRepository.update(db, id, { email, emailVerifiedAt: now, emailVerifiedVia: "email_link", updatedAt: now }),
  /**
   * The organization that manages the account gave it a new address in one of its verified domains
   * (SCIM, issue 36): verified by the domain, as the address it was created with.
   */
  readdress: (db: Executor, id: string, email: string, now: Date): Promise<UserRow | undefined> =>
    usersRepository.update(db, id, { email, emailVerifiedAt: now, emailVerifiedVia: "provider", updatedAt: now }),
  /** A pending account becomes active (an invitation accepted, an admin set its password). */
  activate: (db: Executor, id: string, now: Date, fullName?: string | null): Promise<UserRow | undefined> =>
    usersRepository.update(db, id, { status: "active", ...(fullName === undefined ? {} : { fullName }), updatedAt: now }),
  suspend: (db: Executor, id: string, reason: string | null, now: Date): Promise<UserRow | undefined> =>
    usersRepository.update(db, id, { status: "suspended", suspendedAt: now, suspendedReason: reason, updatedAt: now }),
  unsuspend: (db: Executor, id: string, now: Date): Promise<UserRow | undefined> =>
    usersRepository.update(db, id, { status: "active", suspendedAt: null, suspendedReason: null, updatedAt: now }),
  /** The account's display name, set for its holder by the organization that manages it (SCIM). */
  rename: (db: Executor, id: string, fullName: string | null, now: Date): Promise<UserRow | undefined> => usersRepository.update(db, id, { fullName, updatedAt: now }),
  setSuperadmin: (db: Executor, id: string, value: boolean, now: Date): Promise<UserRow | undefined> => usersRepository.update(db, id, { isSuperadmin: value, updatedAt: now }),
  /** Soft-deletes the account: every live read stops seeing it. */
  softDelete: (db: Executor, id: string, now: Date): Promise<UserRow | undefined> => usersRepository.update(db, id, { deletedAt: now, updatedAt: now }),
  restore: (db: Executor, id: string, now: Date): Promise<UserRow | undefined> => usersRepository.restore(db, id, now),
  /** Ends an organization's management of an account (it left, or was removed from, that organization). */
  releaseFromOrganization: (db: Executor, userId: string, organizationId: string): Promise<void> => usersRepository.releaseFromOrganization(db, userId, organizationId),
  /** The organization is gone: nobody manages its accounts any more. */
  releaseAllFromOrganization: (db: Executor, organizationId: string): Promise<void> => usersRepository.releaseAllFromOrganization(db, organizationId),
};
