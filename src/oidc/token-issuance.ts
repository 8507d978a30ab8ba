import { AsyncLocalStorage } from "node:async_hooks";
import { writeBatcher } from "../infra/write-batcher.js";
import type { AuditEntry, AuditRow } from "../modules/audit/index.js";
import type { OidcAccount } from "../modules/oidc-clients/index.js";
import type { PayloadRow, RefreshRecord } from "./adapter-statements.js";

/**
 * The tokens one provider request has saved so far. A refresh-token record names the access token
 * issued in the same answer: the code and device grants save the access token first, the refresh
 * grant saves the refresh token first, so whichever comes second names the other, by key. (Looking
 * it up by grant instead touched every live refresh token of the grant: concurrent refreshes of one
 * grant then locked the same rows in different orders and PostgreSQL found deadlocks.)
 */
export interface Issuance {
  accessTokenKey?: string;
  refreshTokenKey?: string;
  /**
   * A rotation, held until the answer is built: the old refresh token marked consumed, the new one
   * saved, the access token issued with it and the answer's audit record go as one statement.
   * Written one by one, a process killed between them left the old token spent with no successor,
   * or a new token naming no access token; held, a request that dies or is refused before its
   * answer leaves the old token as it was (nothing was issued), and one answered leaves the
   * rotation whole, its record with it.
   */
  rotation?: Rotation;
  /**
   * The refresh token this request presents is a retry of its last rotation (see adapter.ts, "a
   * lost answer"): spent moments ago, and `replaced`, the successor it was given, still unused.
   */
  refreshRetry?: { key: string; replaced: string };
  /** A retry's rotation was written: the unused successor retired, a new one issued (audited so). */
  refreshRetried?: boolean;
  /**
   * What the refresh-token find read along with the token (see DrizzleAdapter.find): its grant by
   * row key and its account by id, each served once to the read the refresh grant makes next.
   */
  grantsAhead?: Map<string, Stored | undefined>;
  accountsAhead?: Map<string, OidcAccount | undefined>;
  /**
   * A client-credentials token, held until the request's outcome is known: it is then saved
   * together with the request's audit record (and other requests' tokens, see saveBatcher), one
   * statement: both or neither. A refused request saves nothing.
   */
  clientCredentials?: PayloadRow;
  /** How this request's held client-credentials token is saved (the adapter's batcher). */
  save?: (row: PayloadRow, audit?: AuditRow) => Promise<void>;
}
export type Stored = { payload: Record<string, unknown>; consumedAt: Date | null };
export interface Rotation {
  /** The spent token's key, and when it was spent. */
  spent: { key: string; at: Date };
  successor?: { save: PayloadRow; record: RefreshRecord };
  /** A retry (see Issuance.refreshRetry): the unused successor this rotation retires. */
  replaces?: string;
  /** The access token issued with the successor, once saved (held with the rotation). */
  accessToken?: PayloadRow;
  /** Writes the rotation, and `audit` with it when it can go in the same statement: true when it did. */
  write: (audit?: AuditRow) => Promise<boolean>;
}
export const issuance = new AsyncLocalStorage<Issuance>();

/**
 * The account the refresh-token find of this request read along with the token, once (see
 * Issuance.accountsAhead); `undefined` when none was read for `sub`, `{ account: undefined }` when
 * it is not an active account.
 */
export function takeAccountReadAhead(sub: string): { account: OidcAccount | undefined } | undefined {
  const ahead = issuance.getStore()?.accountsAhead;
  if (!ahead?.has(sub)) return undefined;
  const account = ahead.get(sub);
  ahead.delete(sub);
  return { account };
}

/** Whether this request's refresh retried a rotation whose answer was lost (see Issuance.refreshRetry). */
export const refreshRotationRetried = (): boolean => issuance.getStore()?.refreshRetried === true;

/** Runs one provider request with its own record of issued tokens (see Issuance). */
export const withTokenIssuance = <T>(fn: () => T): T => issuance.run({}, fn);

/**
 * Ends what a request holds once the provider has built its answer, before the answer leaves: a
 * rotation, a client-credentials token. Answered: what is held is written with `record`, the audit
 * record of the answer, in the same statement. Refused (say, a resource the grant does not cover,
 * or an ID token that could not be signed): nothing is written, so the failed request spends
 * nothing, as if it had been one transaction rolled back. True when `record` was written here.
 */
export async function settleTokenIssuance(answered: boolean, record?: AuditEntry): Promise<boolean> {
  const issued = issuance.getStore();
  if (!issued) return false;
  const { rotation, clientCredentials } = issued;
  issued.rotation = undefined;
  issued.clientCredentials = undefined;
  if (rotation && answered) {
    if (!(await rotation.write(record?.row))) return false;
    record?.written();
    return record !== undefined;
  }
  if (!clientCredentials || !answered || !issued.save) return false;
  // The token and the record of its issuance: true when the record was written with it.
  await issued.save(clientCredentials, record?.row);
  record?.written();
  return record !== undefined;
}

/** Client-credentials tokens saved together at most (see saveBatcher). */
const MAX_BATCH = 64;

/**
 * Client-credentials tokens saved in the same turn of the event loop go as one statement
 * (writeBatcher). The rows are new (a random key each), so saving them together changes nothing
 * but how often PostgreSQL commits.
 */
export function saveBatcher(saveMany: (rows: PayloadRow[], audit: AuditRow[]) => Promise<unknown>): (row: PayloadRow, audit?: AuditRow) => Promise<void> {
  const save = writeBatcher<{ row: PayloadRow; audit?: AuditRow }, void>(
    async (batch) => {
      await saveMany(
        batch.map((b) => b.row),
        batch.flatMap((b) => (b.audit ? [b.audit] : [])),
      );
      return batch.map(() => undefined);
    },
    { max: MAX_BATCH },
  );
  return (row, audit) => save({ row, audit });
}
