import { and, asc, eq, isNotNull } from "drizzle-orm";
import { oidcClients, organizations } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";

/** Every column an API may show. The sealed secret is not one: only oidc-clients.secrets.repository.ts reads it. */
export const clientColumns = pickColumns(oidcClients, [
  "id", "organizationId", "builtIn", "allowedApiScopes", "clientId", "name", "redirectUris", "postLogoutRedirectUris", "grantTypes", "tokenEndpointAuthMethod",
  "corsOrigins", "accessTokenTtl", "idTokenTtl", "refreshTokenTtl", "idTokenSignedResponseAlg", "registrationTokenId", "createdAt", "updatedAt",
]);
/** A client as stored (`organizationId` is null for Keyward's built-in clients). */
export type ClientRow = Pick<typeof oidcClients.$inferSelect, keyof typeof clientColumns>;

type ClientInsert = Omit<typeof oidcClients.$inferInsert, "id" | "deletedAt">;
/** What an update may change: never the identity, the owner, the secret or the deletion mark. */
export type ClientChanges = Partial<Omit<ClientInsert, "clientId" | "organizationId" | "builtIn" | "clientSecretSealed" | "registrationTokenId" | "createdBy" | "createdAt">>;

/** Relying parties: organizations' registered clients and Keyward's built-in ones. */
export const oidcClientsRepository = {
  listForOrg: (db: Executor, orgId: string): Promise<ClientRow[]> =>
    db.select(clientColumns).from(oidcClients).where(and(eq(oidcClients.organizationId, orgId), live(oidcClients))).orderBy(oidcClients.name),

  listBuiltIn: (db: Executor): Promise<ClientRow[]> =>
    db.select(clientColumns).from(oidcClients).where(and(eq(oidcClients.builtIn, true), live(oidcClients))).orderBy(asc(oidcClients.clientId)),

  /** A live client of one organization; `forUpdate` locks the row for the caller's transaction. */
  async findInOrg(db: Executor, orgId: string, clientId: string, opts: { forUpdate?: boolean } = {}): Promise<ClientRow | undefined> {
    const query = db
      .select(clientColumns)
      .from(oidcClients)
      .where(and(eq(oidcClients.organizationId, orgId), eq(oidcClients.clientId, clientId), live(oidcClients)));
    const [row] = opts.forUpdate ? await query.for("update") : await query;
    return row;
  },

  /** A live client that registered itself (RFC 7591), the only kind its registration access token manages. */
  async findRegistered(db: Executor, clientId: string, opts: { forUpdate?: boolean } = {}): Promise<ClientRow | undefined> {
    const query = db
      .select(clientColumns)
      .from(oidcClients)
      .where(and(eq(oidcClients.clientId, clientId), isNotNull(oidcClients.registrationTokenId), live(oidcClients)));
    const [row] = opts.forUpdate ? await query.for("update") : await query;
    return row;
  },

  /** Any live client, whoever owns it (superadmins). */
  async find(db: Executor, clientId: string): Promise<ClientRow | undefined> {
    const [row] = await db.select(clientColumns).from(oidcClients).where(and(eq(oidcClients.clientId, clientId), live(oidcClients)));
    return row;
  },

  /** Name and owning organization's name, for the consent and device pages. */
  async summary(db: Executor, clientId: string): Promise<{ clientId: string; name: string; organizationName: string | null } | undefined> {
    const [row] = await db
      .select({ clientId: oidcClients.clientId, name: oidcClients.name, organizationName: organizations.name })
      .from(oidcClients)
      .leftJoin(organizations, eq(organizations.id, oidcClients.organizationId))
      .where(and(eq(oidcClients.clientId, clientId), live(oidcClients)));
    return row;
  },

  /** Registers a client; a confidential one comes with its sealed secret. */
  async insert(db: Executor, v: ClientInsert): Promise<ClientRow> {
    const [row] = await db.insert(oidcClients).values(v).returning(clientColumns);
    return row!;
  },

  /** Creates the clients that are missing (by client id) and leaves existing ones as they are. */
  async insertMissing(db: Executor, rows: ClientInsert[]): Promise<void> {
    await db.insert(oidcClients).values(rows).onConflictDoNothing({ target: oidcClients.clientId });
  },

  async update(db: Executor, id: string, changes: ClientChanges): Promise<ClientRow> {
    const [row] = await db.update(oidcClients).set(changes).where(eq(oidcClients.id, id)).returning(clientColumns);
    return row!;
  },

  /** Replaces the sealed secret (the clear one is shown once and never stored). */
  async replaceSealedSecret(db: Executor, id: string, sealed: string, now: Date): Promise<void> {
    await db.update(oidcClients).set({ clientSecretSealed: sealed, updatedAt: now }).where(eq(oidcClients.id, id));
  },

  async softDelete(db: Executor, id: string, now: Date): Promise<void> {
    await db.update(oidcClients).set({ deletedAt: now, updatedAt: now }).where(eq(oidcClients.id, id));
  },
};
