import { AsyncLocalStorage } from "node:async_hooks";
import { and, eq, gt, isNull, or, sql, type SQL } from "drizzle-orm";
import type { Adapter, AdapterPayload } from "oidc-provider";
import { oidcPayloads, oidcRefreshTokens } from "../../schema/index.js";
import type { Clock } from "../infra/clock.js";
import { sha256Hex, type SecretBox, sealContexts } from "../lib/crypto/index.js";
import type { Db } from "../infra/db.js";
import type { OidcClientsService } from "../modules/oidc-clients/index.js";

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
}
interface Rotation {
  /** The spent token's payload and record updates. */
  spent: SQL[];
  successor?: { save: SQL; record: (accessTokenId: string | null) => SQL };
  write: (accessToken: { key: string; save: SQL } | null) => Promise<void>;
}
const issuance = new AsyncLocalStorage<Issuance>();

/** Runs one provider request with its own record of issued tokens (see Issuance). */
export const withTokenIssuance = <T>(fn: () => T): T => issuance.run({}, fn);

/**
 * Ends a request's held rotation once the provider has built its answer, before the answer leaves.
 * Answered: what is still held is written (an access token in a format that is not stored would
 * never release it). Refused (say, a resource the grant does not cover): nothing is written, so the
 * failed request spends nothing, as if it had been one transaction rolled back.
 */
export async function settleTokenIssuance(answered: boolean): Promise<void> {
  const issued = issuance.getStore();
  const rotation = issued?.rotation;
  if (!rotation) return;
  issued.rotation = undefined;
  if (answered) await rotation.write(null);
}

/**
 * oidc-provider's storage on PostgreSQL (or PGlite), one table for every model. Clients are not
 * stored here: they are read from the organizations' registered clients.
 */
export function createAdapterFactory(db: Db, clock: Clock, clients: OidcClientsService, box: SecretBox) {
  // Every grant reads a few models by id: one prepared statement, built once.
  const findById = db
    .select({ payload: oidcPayloads.payload, consumedAt: oidcPayloads.consumedAt })
    .from(oidcPayloads)
    .where(
      and(
        eq(oidcPayloads.type, sql.placeholder("type")),
        eq(oidcPayloads.id, sql.placeholder("id")),
        or(isNull(oidcPayloads.expiresAt), gt(oidcPayloads.expiresAt, sql.placeholder("now"))),
      ),
    )
    .prepare("oidc_payload_find");

  return class DrizzleAdapter implements Adapter {
    constructor(private readonly model: string) {}

    private stored(id: string, payload: AdapterPayload): Record<string, unknown> {
      const { jti: _jti, ...rest } = payload as AdapterPayload & { jti?: string };
      return FOUND_BY_OTHER_KEY.has(this.model) ? { ...rest, jtiSealed: box.encrypt(id, jtiContext(this.model)) } : rest;
    }

    private restored(id: string | null, row: { payload: Record<string, unknown>; consumedAt: Date | null }): AdapterPayload {
      const { jtiSealed, ...payload } = row.payload;
      const jti = id ?? (typeof jtiSealed === "string" ? box.decryptString(jtiSealed, jtiContext(this.model)) : undefined);
      return { ...(payload as AdapterPayload), ...(jti ? { jti } : {}), ...(row.consumedAt ? { consumed: Math.floor(row.consumedAt.getTime() / 1000) } : {}) };
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const now = clock.now();
      const expiresAt = expiresIn ? new Date(now.getTime() + expiresIn * 1000) : null;
      const key = keyOf(id);
      const values = {
        id: key,
        type: this.model,
        payload: this.stored(id, payload),
        grantId: GRANT_INDEXED.has(this.model) ? (payload.grantId ?? null) : null,
        userCode: payload.userCode ?? null,
        uid: payload.uid ?? null,
        expiresAt,
      };
      const savePayload = db
        .insert(oidcPayloads)
        .values(values)
        .onConflictDoUpdate({ target: [oidcPayloads.type, oidcPayloads.id], set: { payload: values.payload, grantId: values.grantId, userCode: values.userCode, uid: values.uid, expiresAt } });
      // Token saves that also keep the refresh-token record go as one statement (one round trip,
      // one commit): this is the hot path of every refresh grant. Each touches its own rows only.
      const issued = issuance.getStore();
      if (this.model === "RefreshToken" && payload.grantId) {
        if (issued) issued.refreshTokenKey = key;
        const record = (accessTokenId: string | null) =>
          db
            .insert(oidcRefreshTokens)
            .values({ id: key, grantId: payload.grantId!, clientId: String(payload.clientId ?? ""), accountId: payload.accountId ?? null, accessTokenId, expiresAt, createdAt: now })
            .onConflictDoNothing();
        // The successor of a rotation waits for its access token (see Issuance.rotation).
        const rotation = issued?.rotation;
        if (rotation && !rotation.successor && !issued.accessTokenKey) {
          rotation.successor = { save: savePayload.getSQL(), record: (accessTokenId) => record(accessTokenId).getSQL() };
          return;
        }
        await db.execute(sql`with saved as (${savePayload.getSQL()}) ${record(issued?.accessTokenKey ?? null).getSQL()}`);
      } else if (this.model === "AccessToken" && issued) {
        issued.accessTokenKey = key;
        const rotation = issued.rotation;
        issued.rotation = undefined;
        if (rotation) return void (await rotation.write({ key, save: savePayload.getSQL() }));
        if (!issued.refreshTokenKey) return void (await savePayload);
        // The refresh grant's new refresh token, saved a moment ago in this request, names it.
        const name = db.update(oidcRefreshTokens).set({ accessTokenId: key }).where(eq(oidcRefreshTokens.id, issued.refreshTokenKey));
        await db.execute(sql`with saved as (${savePayload.getSQL()}) ${name.getSQL()}`);
      } else {
        await savePayload;
      }
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === "Client") return clients.providerMetadata(id);
      const [row] = await findById.execute({ type: this.model, id: keyOf(id), now: clock.now().toISOString() });
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
      if (this.model !== "RefreshToken") {
        await db.update(oidcPayloads).set({ consumedAt: now }).where(and(eq(oidcPayloads.type, this.model), eq(oidcPayloads.id, key)));
        return;
      }
      const spent = [
        db.update(oidcPayloads).set({ consumedAt: now }).where(and(eq(oidcPayloads.type, "RefreshToken"), eq(oidcPayloads.id, key))).getSQL(),
        db.update(oidcRefreshTokens).set({ consumedAt: now }).where(eq(oidcRefreshTokens.id, key)).getSQL(),
      ];
      // A rotation: spent together with its successor's save (see Issuance.rotation).
      const issued = issuance.getStore();
      if (issued && !issued.rotation) {
        const rotation: Rotation = {
          spent,
          write: async (at) => {
            const parts = [...rotation.spent, ...(rotation.successor ? [rotation.successor.save] : []), ...(at ? [at.save] : [])];
            const last = rotation.successor ? rotation.successor.record(at?.key ?? null) : parts.pop()!;
            await db.execute(sql`with ${sql.join(parts.map((p, i) => sql`${sql.raw(`w${i}`)} as (${p})`), sql`, `)} ${last}`);
          },
        };
        issued.rotation = rotation;
        return;
      }
      // The payload and the refresh-token record, in one statement.
      await db.execute(sql`with marked as (${spent[0]}) ${spent[1]}`);
    }

    async destroy(id: string): Promise<void> {
      await db.delete(oidcPayloads).where(and(eq(oidcPayloads.type, this.model), eq(oidcPayloads.id, keyOf(id))));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await db.delete(oidcPayloads).where(eq(oidcPayloads.grantId, grantId));
      await db.update(oidcRefreshTokens).set({ consumedAt: clock.now() }).where(and(eq(oidcRefreshTokens.grantId, grantId), isNull(oidcRefreshTokens.consumedAt)));
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
