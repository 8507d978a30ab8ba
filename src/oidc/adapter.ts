import { AsyncLocalStorage } from "node:async_hooks";
import { and, eq, gt, isNull, or } from "drizzle-orm";
import { errors, type Adapter, type AdapterPayload } from "oidc-provider";
import { oidcPayloads, oidcRefreshTokens } from "../../schema/index.js";
import type { Clock } from "../infra/clock.js";
import { sha256Hex, type SecretBox, sealContexts } from "../lib/crypto/index.js";
import type { Db } from "../infra/db.js";
import { isDependencyOutage } from "../infra/db-errors.js";
import { adapterStatements, type PayloadRow, type RefreshRecord } from "./adapter-statements.js";
import type { OidcAccount, OidcClientsService, OidcIdentityService } from "../modules/oidc-clients/index.js";
import type { AuditEntry, AuditRow } from "../modules/audit/index.js";

/** Models a grant redeems once (oidc-provider's grant sources), with the provider's name for each in its errors. */
const GRANT_SOURCES: Record<string, string | undefined> = {
  AuthorizationCode: "authorization code",
  DeviceCode: "device code",
  BackchannelAuthenticationRequest: "backchannel authentication request",
  PreAuthorizedCode: "pre-authorized code",
};

const GRANT_INDEXED = new Set(["AccessToken", "AuthorizationCode", "RefreshToken", "DeviceCode", "BackchannelAuthenticationRequest", "PreAuthorizedCode"]);

/**
 * A model's id is a bearer secret for most models (access and refresh tokens, codes, the session
 * cookie), so rows are keyed by its SHA-256 and the `jti` copy inside the payload is not stored.
 */
const keyOf = (id: string) => sha256Hex(id);
// Models also found by another key (user code, session uid) keep their id sealed, to restore it.
const FOUND_BY_OTHER_KEY = new Set(["DeviceCode", "Session"]);
const jtiContext = sealContexts.oidcJti;

/**
 * The tokens one provider request has saved so far. A refresh-token record names the access token
 * issued in the same answer: the code and device grants save the access token first, the refresh
 * grant saves the refresh token first, so whichever comes second names the other, by key. (Looking
 * it up by grant instead touched every live refresh token of the grant: concurrent refreshes of one
 * grant then locked the same rows in different orders and PostgreSQL found deadlocks.)
 */
interface Issuance {
  accessTokenKey?: string;
  refreshTokenKey?: string;
  /**
   * A rotation, held until the access token issued with it is saved: the old refresh token marked
   * consumed, the new one saved and the access token saved then go as one statement. Written one
   * by one, a process killed between them left the old token spent with no successor, or a new
   * token naming no access token; held, a request that dies before its last write leaves the old
   * token as it was (nothing was issued), and one that got that far leaves the rotation whole.
   */
  rotation?: Rotation;
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
type Stored = { payload: Record<string, unknown>; consumedAt: Date | null };
interface Rotation {
  /** The spent token's key, and when it was spent. */
  spent: { key: string; at: Date };
  successor?: { save: PayloadRow; record: RefreshRecord };
  write: (accessToken: PayloadRow | null) => Promise<void>;
}
const issuance = new AsyncLocalStorage<Issuance>();

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

/** Runs one provider request with its own record of issued tokens (see Issuance). */
export const withTokenIssuance = <T>(fn: () => T): T => issuance.run({}, fn);

/**
 * Ends what a request holds once the provider has built its answer, before the answer leaves: a
 * rotation, a client-credentials token. Answered: what is still held is written (an access token in
 * a format that is not stored would never release a rotation), the token with `record`, the audit
 * record of the answer, in the same statement. Refused (say, a resource the grant does not cover):
 * nothing is written, so the failed request spends nothing, as if it had been one transaction
 * rolled back. True when `record` was written here.
 */
export async function settleTokenIssuance(answered: boolean, record?: AuditEntry): Promise<boolean> {
  const issued = issuance.getStore();
  if (!issued) return false;
  const { rotation, clientCredentials } = issued;
  issued.rotation = undefined;
  issued.clientCredentials = undefined;
  if (rotation && answered) await rotation.write(null);
  if (!clientCredentials || !answered || !issued.save) return false;
  // The token and the record of its issuance: true when the record was written with it.
  await issued.save(clientCredentials, record?.row);
  record?.written();
  return record !== undefined;
}

/** Client-credentials tokens saved together at most (see saveBatcher). */
const MAX_BATCH = 64;

/**
 * Client-credentials tokens saved in the same turn of the event loop go as one statement (one round
 * trip, one commit) instead of one each: under load, several requests reach their save together.
 * Each request still answers only once its token is stored. The rows are new (a random key each),
 * so saving them together changes nothing but how often PostgreSQL commits. A statement the
 * database refuses is tried again one request at a time, so a row it cannot store fails its own
 * request only; an outage fails them all (a retry could not tell what was stored).
 */
function saveBatcher(saveMany: (rows: PayloadRow[], audit: AuditRow[]) => Promise<unknown>) {
  let pending: { row: PayloadRow; audit?: AuditRow; resolve: () => void; reject: (e: unknown) => void }[] = [];
  const flush = async () => {
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    try {
      await saveMany(
        batch.map((r) => r.row),
        batch.flatMap((r) => (r.audit ? [r.audit] : [])),
      );
      for (const r of batch) r.resolve();
    } catch (e) {
      if (batch.length === 1 || isDependencyOutage(e)) {
        for (const r of batch) r.reject(e);
        return;
      }
      await Promise.all(
        batch.map((r) =>
          saveMany([r.row], r.audit ? [r.audit] : []).then(
            () => r.resolve(),
            (err: unknown) => r.reject(err),
          ),
        ),
      );
    }
  };
  return (row: PayloadRow, audit?: AuditRow) =>
    new Promise<void>((resolve, reject) => {
      pending.push({ row, audit, resolve, reject });
      if (pending.length === 1) setImmediate(() => void flush());
      else if (pending.length >= MAX_BATCH) void flush();
    });
}

/**
 * oidc-provider's storage on PostgreSQL (or PGlite), one table for every model. Clients are not
 * stored here: they are read from the organizations' registered clients.
 */
export function createAdapterFactory(db: Db, clock: Clock, clients: OidcClientsService, identity: OidcIdentityService, box: SecretBox) {
  const statements = adapterStatements(db);
  const batch = saveBatcher(statements.saveMany);

  return class DrizzleAdapter implements Adapter {
    constructor(private readonly model: string) {}

    private stored(id: string, payload: AdapterPayload): Record<string, unknown> {
      const { jti: _jti, ...rest } = payload as AdapterPayload & { jti?: string };
      return FOUND_BY_OTHER_KEY.has(this.model) ? { ...rest, jtiSealed: box.encrypt(id, jtiContext(this.model)) } : rest;
    }

    private restored(id: string | null, row: Stored): AdapterPayload {
      const { jtiSealed, ...payload } = row.payload;
      const jti = id ?? (typeof jtiSealed === "string" ? box.decryptString(jtiSealed, jtiContext(this.model)) : undefined);
      return { ...(payload as AdapterPayload), ...(jti ? { jti } : {}), ...(row.consumedAt ? { consumed: Math.floor(row.consumedAt.getTime() / 1000) } : {}) };
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const now = clock.now();
      const expiresAt = expiresIn ? new Date(now.getTime() + expiresIn * 1000) : null;
      const key = keyOf(id);
      this.forgetReadAhead(key);
      const row: PayloadRow = {
        id: key,
        type: this.model,
        payload: this.stored(id, payload),
        grantId: GRANT_INDEXED.has(this.model) ? (payload.grantId ?? null) : null,
        userCode: payload.userCode ?? null,
        uid: payload.uid ?? null,
        expiresAt,
      };
      // Token saves that also keep the refresh-token record go as one statement (one round trip,
      // one commit): this is the hot path of every refresh grant. Each touches its own rows only.
      const issued = issuance.getStore();
      if (this.model === "RefreshToken" && payload.grantId) {
        if (issued) issued.refreshTokenKey = key;
        const record: RefreshRecord = { id: key, grantId: payload.grantId, clientId: String(payload.clientId ?? ""), accountId: payload.accountId ?? null, expiresAt, createdAt: now };
        // The successor of a rotation waits for its access token (see Issuance.rotation).
        const rotation = issued?.rotation;
        if (rotation && !rotation.successor && !issued.accessTokenKey) {
          rotation.successor = { save: row, record };
          return;
        }
        await statements.run([statements.saveSql(row)], statements.recordSql(record, issued?.accessTokenKey ?? null));
      } else if (this.model === "AccessToken" && issued) {
        issued.accessTokenKey = key;
        const rotation = issued.rotation;
        issued.rotation = undefined;
        if (rotation) return rotation.write(row);
        if (!issued.refreshTokenKey) return void (await statements.save(row));
        // The refresh grant's new refresh token, saved a moment ago in this request, names it.
        await statements.run([statements.saveSql(row)], statements.nameAccessTokenSql(issued.refreshTokenKey, key));
      } else if (this.model === "ClientCredentials") {
        // Within a provider request: held for its audit record (see Issuance.clientCredentials).
        if (issued) {
          issued.clientCredentials = row;
          issued.save = batch;
          return;
        }
        await batch(row);
      } else {
        await statements.save(row);
      }
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === "Client") return clients.providerMetadata(id);
      const key = keyOf(id);
      const issued = issuance.getStore();
      // The refresh grant reads the token, its grant and its account in turn: one statement reads the three.
      if (this.model === "RefreshToken" && issued) {
        const read = await identity.refreshTokenContext(key, clock.now());
        if (!read) return undefined;
        if (read.grant) (issued.grantsAhead ??= new Map()).set(read.grant.key, read.grant.row);
        if (read.account) (issued.accountsAhead ??= new Map()).set(read.account.sub, read.account.account);
        return this.restored(id, read.token);
      }
      if (this.model === "Grant" && issued?.grantsAhead?.has(key)) {
        const row = issued.grantsAhead.get(key);
        issued.grantsAhead.delete(key);
        return row ? this.restored(id, row) : undefined;
      }
      const [row] = await statements.find({ type: this.model, id: key, now: clock.now() });
      return row ? this.restored(id, row) : undefined;
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.findBy(eq(oidcPayloads.userCode, userCode));
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.findBy(eq(oidcPayloads.uid, uid));
    }

    async consume(id: string): Promise<void> {
      const now = clock.now();
      const key = keyOf(id);
      const label = GRANT_SOURCES[this.model];
      if (label) {
        // A code is redeemed once. Two token requests presenting it at the same moment both read it
        // unused; only the first to write consumes it. The other is a reuse, answered as the provider
        // answers one (the grant revoked, invalid_grant) before anything is issued to it.
        if (await statements.consumeOnce(this.model, key, now)) return;
        const grantId = await statements.grantOfPayload(this.model, key);
        if (grantId === null) throw new errors.InvalidGrant(`${label} not found`);
        if (grantId) await statements.revokeGrant(grantId, keyOf(grantId), clock.now());
        throw new errors.InvalidGrant(`${label} already consumed`);
      }
      if (this.model !== "RefreshToken") {
        await db.update(oidcPayloads).set({ consumedAt: now }).where(and(eq(oidcPayloads.type, this.model), eq(oidcPayloads.id, key)));
        return;
      }
      // A rotation: spent together with its successor's save (see Issuance.rotation).
      const issued = issuance.getStore();
      if (issued && !issued.rotation) {
        const rotation: Rotation = {
          spent: { key, at: now },
          write: async (accessToken) => {
            const { spent, successor } = rotation;
            const rotated =
              successor && accessToken
                ? await statements.rotate({ spent, successor: successor.save, record: successor.record, accessToken })
                : await statements.spendOnce(spent, [
                    ...(successor ? [statements.saveSql(successor.save), statements.recordSql(successor.record, accessToken?.id ?? null)] : []),
                    ...(accessToken ? [statements.saveSql(accessToken)] : []),
                  ]);
            if (rotated) return;
            // Nothing was written. The token is gone (revoked, or its grant revoked, since it was
            // read): not found, as the provider says of a missing token. Or another request presented
            // it at the same moment and spent it first: a reuse, answered as the provider answers one
            // (the grant revoked, invalid_grant).
            const found = await statements.grantOfPayload("RefreshToken", spent.key);
            if (found === null) throw new errors.InvalidGrant("refresh token not found");
            const grantId = successor?.record.grantId ?? found;
            if (grantId) await statements.revokeGrant(grantId, keyOf(grantId), clock.now());
            throw new errors.InvalidGrant("refresh token already used");
          },
        };
        issued.rotation = rotation;
        return;
      }
      // The payload and the refresh-token record, in one statement.
      const [payloadSpent, recordSpent] = statements.spentSql(key, now);
      await statements.run([payloadSpent!], recordSpent!);
    }

    async destroy(id: string): Promise<void> {
      this.forgetReadAhead(keyOf(id));
      await db.delete(oidcPayloads).where(and(eq(oidcPayloads.type, this.model), eq(oidcPayloads.id, keyOf(id))));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      issuance.getStore()?.grantsAhead?.delete(keyOf(grantId));
      await db.delete(oidcPayloads).where(eq(oidcPayloads.grantId, grantId));
      await db.update(oidcRefreshTokens).set({ consumedAt: clock.now() }).where(and(eq(oidcRefreshTokens.grantId, grantId), isNull(oidcRefreshTokens.consumedAt)));
    }

    /** A grant this request writes is read again from the table, not from what was read ahead. */
    private forgetReadAhead(key: string): void {
      if (this.model === "Grant") issuance.getStore()?.grantsAhead?.delete(key);
    }

    private async findBy(condition: ReturnType<typeof eq>): Promise<AdapterPayload | undefined> {
      const [row] = await db
        .select({ payload: oidcPayloads.payload, consumedAt: oidcPayloads.consumedAt })
        .from(oidcPayloads)
        .where(and(eq(oidcPayloads.type, this.model), condition, this.unexpired()));
      return row ? this.restored(null, row) : undefined;
    }

    private unexpired() {
      return or(isNull(oidcPayloads.expiresAt), gt(oidcPayloads.expiresAt, clock.now()));
    }
  };
}
