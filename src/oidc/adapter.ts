import { and, eq, gt, isNull, or } from "drizzle-orm";
import Provider, { errors, type Adapter, type AdapterPayload } from "oidc-provider";
import { oidcPayloads, oidcRefreshTokens } from "../../schema/index.js";
import type { Clock } from "../infra/clock.js";
import { sha256Hex, type SecretBox, sealContexts } from "../lib/crypto/index.js";
import type { Db } from "../infra/db.js";
import { adapterStatements, type PayloadRow, type RefreshRecord } from "./adapter-statements.js";
import { refreshStatements } from "./refresh-statements.js";
import { issuance, saveBatcher, type Rotation, type Stored } from "./token-issuance.js";
import type { RegistrationStore } from "./registration.js";
import type { OidcClientsService, OidcIdentityService, RefreshTokenContext } from "../modules/oidc-clients/index.js";

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
 * A lost answer. When the connection is cut after a refresh's rotation was written, the client
 * holds only the token it just spent, and presenting it again would be a reuse that ends the grant.
 * So, as Auth0's reuse interval and Okta's grace period allow, the same client may present the
 * token it spent again within `OIDC_REFRESH_RETRY_GRACE` seconds of that rotation, as long as the
 * successor it was given is unused: the token is rotated again, and the unused successor (with the
 * access token issued with it) is retired, so exactly one live successor remains. Handing back the
 * same successor instead (Okta's way) would mean keeping a live refresh token decryptable at rest,
 * where Keyward keeps only its SHA-256; and the provider mints every successor itself.
 *
 * Reuse detection keeps its strength: once the successor was used (so the answer did arrive), after
 * the grace period, by another client (the provider refuses a client mismatch first), for a token
 * spent other than by a rotation, or for a retired successor, a presentation is a reuse as before
 * and revokes the grant. A thief presenting a stolen token within the grace period, before the
 * client used its successor, retires the client's tokens: the client's next refresh is then a reuse,
 * which revokes the grant, the thief's new tokens with it.
 *
 * The retry is written as a rotation is, in one statement (refresh-statements.ts, rotateAgain), so
 * a killed process leaves it whole or not at all, and the successor row decides between requests
 * presenting the token at once: each is answered, the last to write holding the one live successor.
 */
/** Writes one request tries when others keep changing the token's successor under it (each failure is another's success). */
const RETRY_ATTEMPTS = 8;

export interface AdapterOptions {
  /** OIDC_REFRESH_RETRY_GRACE in milliseconds (0: no retry, every reuse revokes). */
  refreshRetryGraceMs: number;
  /** Registered clients and initial access tokens (Dynamic Client Registration, registration.ts). */
  registration: RegistrationStore;
}

/** Whether the provider request being served is a refresh grant (not introspection or revocation, which also read refresh tokens). */
const isRefreshGrant = (): boolean => {
  const oidc = Provider.ctx?.oidc;
  return oidc?.route === "token" && oidc.params?.grant_type === "refresh_token";
};


/**
 * oidc-provider's storage on PostgreSQL (or PGlite), one table for every model. Clients are not
 * stored here: they are the organizations' clients, and a client that registers itself (RFC 7591)
 * becomes one through the registration service, as do initial access tokens.
 */
export function createAdapterFactory(db: Db, clock: Clock, clients: OidcClientsService, identity: OidcIdentityService, box: SecretBox, options: AdapterOptions) {
  const statements = { ...adapterStatements(db), ...refreshStatements(db) };
  const batch = saveBatcher(statements.saveMany);
  const graceMs = options.refreshRetryGraceMs;
  /** A token spent at or after this may still be retried (see "a lost answer" above). */
  const graceStart = () => new Date(clock.now().getTime() - graceMs);
  /** A spent refresh token presented again is a retry of its rotation rather than a reuse. */
  const isRetry = (read: RefreshTokenContext): read is RefreshTokenContext & { rotatedTo: { key: string } } =>
    graceMs > 0 && read.token.consumedAt !== null && read.token.consumedAt >= graceStart() && read.rotatedTo?.unspent === true && isRefreshGrant();

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
      if (this.model === "Client") return options.registration.saveClient(id, payload);
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
        // A rotation's access token: held with it until the answer is built (settleTokenIssuance).
        const rotation = issued.rotation;
        if (rotation && !rotation.accessToken) {
          rotation.accessToken = row;
          return;
        }
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
      if (this.model === "InitialAccessToken") return options.registration.findInitialAccessToken(id);
      const key = keyOf(id);
      const issued = issuance.getStore();
      // The refresh grant reads the token, its grant and its account in turn: one statement reads the three.
      if (this.model === "RefreshToken" && issued) {
        const read = await identity.refreshTokenContext(key, clock.now());
        if (!read) return undefined;
        if (read.grant) (issued.grantsAhead ??= new Map()).set(read.grant.key, read.grant.row);
        if (read.account) (issued.accountsAhead ??= new Map()).set(read.account.sub, read.account.account);
        // A retry is served as the token it was before its rotation; the write decides (see consume).
        if (isRetry(read)) {
          issued.refreshRetry = { key, replaced: read.rotatedTo.key };
          return this.restored(id, { ...read.token, consumedAt: null });
        }
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
          replaces: issued.refreshRetry?.key === key ? issued.refreshRetry.replaced : undefined,
          write: async (audit) => {
            const { spent, successor, accessToken } = rotation;
            if (successor && accessToken) {
              const values = { spent, successor: successor.save, record: successor.record, accessToken };
              // The answer's record goes in the rotation's statement; a retry's says it is one.
              const auditOf = (retry: boolean) => (!audit ? [] : retry ? [{ ...audit, metadata: { ...audit.metadata, rotation_retry: true } }] : [audit]);
              let replaced = rotation.replaces;
              for (let attempt = 0; attempt < RETRY_ATTEMPTS; attempt++) {
                if (replaced ? await statements.rotateAgain({ ...values, audit: auditOf(true), replaced, since: graceStart() }) : await statements.rotate({ ...values, audit: auditOf(false) })) {
                  if (replaced) issued.refreshRetried = true;
                  return audit !== undefined;
                }
                // Nothing was written: since the token was read, another request spent it (two
                // presentations at once), or used or retired its successor. Still a retry if the
                // token was spent within the grace period and its successor, now, is unused.
                replaced = graceMs > 0 ? await statements.unusedSuccessor(spent.key, graceStart()) : undefined;
                if (!replaced) break;
              }
            } else if (
              // Another shape (no successor, or an access token that is not stored) is never retried:
              // Keyward stores every access token it issues, so this is the provider's corner only.
              await statements.spendOnce({ ...spent, successor: successor?.save.id }, [
                ...(successor ? [statements.saveSql(successor.save), statements.recordSql(successor.record, accessToken?.id ?? null)] : []),
                ...(accessToken ? [statements.saveSql(accessToken)] : []),
              ])
            ) {
              return false;
            }
            // Nothing was written. The token is gone (revoked, or its grant revoked, since it was
            // read): not found, as the provider says of a missing token. Or another request used it
            // (or its successor, for a retry) first, beyond what a retry allows: a reuse, answered as
            // the provider answers one (the grant revoked, invalid_grant).
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
      if (this.model === "Client") return options.registration.destroyClient(id);
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
