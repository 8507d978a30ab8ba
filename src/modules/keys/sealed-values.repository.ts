import { sql, type SQL } from "drizzle-orm";
import { resultRows, type Executor } from "../../infra/db.js";
import { sealContexts } from "../../lib/crypto/index.js";

/**
 * Every sealed value at rest, by kind: where it is stored, which box seals it (CA keys have a master
 * key of their own) and the context it is bound to. A new sealed column is added here, and the
 * reseal test fails until it is. What reads the ciphertexts is sealed-values.secrets.repository.ts
 * (privileged); this file writes them back and counts them by key, and returns none.
 */
export interface SealedKind {
  box: "data" | "ca";
  table: string;
  /** The row's key columns, selected as text. */
  keys: readonly string[];
  /** The sealed text (a column, or a member of a JSON column). */
  sealed: SQL;
  set: (value: string) => SQL;
  /** The column holding the sealed text, when it is a column of its own. */
  column?: string;
  context: (keys: readonly string[]) => string;
}

const c = (name: string) => sql.identifier(name);
const column = (name: string): Pick<SealedKind, "sealed" | "set" | "column"> => ({ column: name, sealed: sql`${c(name)}`, set: (v) => sql`${c(name)} = ${v}` });

export const SEALED_KINDS = {
  "ssh-ca-private-key": { box: "ca", table: "ca_keys", keys: ["id"], ...column("private_key_sealed"), context: ([id]) => sealContexts.caKey(id!) },
  "totp-seed": { box: "data", table: "totp_factors", keys: ["user_id"], ...column("secret_sealed"), context: ([userId]) => sealContexts.totp(userId!) },
  "email-outbox-payload": { box: "data", table: "email_outbox", keys: ["id"], ...column("props_sealed"), context: () => sealContexts.emailOutbox() },
  "oidc-signing-key": { box: "data", table: "oidc_signing_keys", keys: ["kid"], ...column("private_jwk_sealed"), context: ([kid]) => sealContexts.oidcSigningKey(kid!) },
  "oidc-client-secret": { box: "data", table: "oidc_clients", keys: ["client_id"], ...column("client_secret_sealed"), context: ([id]) => sealContexts.oidcClientSecret(id!) },
  "oauth-provider-secret": { box: "data", table: "oauth_provider_configs", keys: ["provider"], ...column("client_secret_sealed"), context: ([p]) => sealContexts.oauthProviderSecret(p!) },
  "sso-connection-secret": { box: "data", table: "sso_connections", keys: ["id"], ...column("secret_sealed"), context: ([id]) => sealContexts.ssoConnectionSecret(id!) },
  "audit-signing-key": { box: "data", table: "audit_signing_keys", keys: ["kid"], ...column("private_key_sealed"), context: ([kid]) => sealContexts.auditSigningKey(kid!) },
  "network-controller-token": { box: "data", table: "network_controllers", keys: ["organization_id"], ...column("token_sealed"), context: ([org]) => sealContexts.controllerToken(org!) },
  "oidc-payload-id": {
    box: "data",
    table: "oidc_payloads",
    keys: ["type", "id"],
    sealed: sql`(payload->>'jtiSealed')`,
    set: (v) => sql`payload = jsonb_set(payload, '{jtiSealed}', to_jsonb(${v}::text))`,
    context: ([type]) => sealContexts.oidcJti(type!),
  },
} satisfies Record<string, SealedKind>;

export type SealedKindName = keyof typeof SEALED_KINDS;

export interface SealedValue {
  keys: string[];
  sealed: string;
}

/** The key id a sealed text names (`v1.<kid>.…`). */
export const keyIdOf = (k: SealedKind) => sql`split_part(${k.sealed}, '.', 2)`;

export const sealedValuesRepository = {
  /** Replaces one value if it is still the one read (a concurrent change wins); true when replaced. */
  async replace(db: Executor, name: SealedKindName, value: SealedValue, resealed: string): Promise<boolean> {
    const k: SealedKind = SEALED_KINDS[name];
    const match = sql.join(k.keys.map((col, i) => sql`${c(col)} = ${value.keys[i]}`), sql` and `);
    const rows = resultRows<{ ok: number }>(await db.execute(sql`update ${c(k.table)} set ${k.set(resealed)} where ${match} and ${k.sealed} = ${value.sealed} returning 1 as ok`));
    return rows.length === 1;
  },

  /** How many values of a kind each key id seals. */
  async countByKey(db: Executor, name: SealedKindName): Promise<Record<string, number>> {
    const k: SealedKind = SEALED_KINDS[name];
    const rows = resultRows<{ key_id: string; n: string | number }>(
      await db.execute(sql`select ${keyIdOf(k)} as key_id, count(*) as n from ${c(k.table)} where ${k.sealed} is not null group by 1 order by 1`),
    );
    return Object.fromEntries(rows.map((r) => [r.key_id, Number(r.n)]));
  },
};
