import { and, eq, sql } from "drizzle-orm";
import { oidcClients, oidcConsents, oidcPayloads, oidcRefreshTokens, organizations } from "../../../schema/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";
import { randomHex, randomToken, type SecretBox } from "../../lib/crypto/index.js";
import { AppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/audit.actions.js";
import type { AuditService } from "../audit/audit.service.js";
import { requirePersonalUser, requireUser } from "../auth/guards.js";
import { requireOrgAccess } from "../orgs/org-access.js";
import { clientSchema, createClientSchema, updateClientSchema } from "./oidc-clients.schemas.js";

export const ClientErrors = {
  notFound: () => new AppError("CLIENT_NOT_FOUND", 404, "Client not found"),
  notConfidential: () => new AppError("BAD_REQUEST", 400, "A public client has no secret to rotate"),
  consentNotFound: () => new AppError("NOT_FOUND", 404, "No consent for that client"),
};

export const clientColumns = {
  id: oidcClients.id,
  organizationId: oidcClients.organizationId,
  builtIn: oidcClients.builtIn,
  allowedApiScopes: oidcClients.allowedApiScopes,
  clientId: oidcClients.clientId,
  name: oidcClients.name,
  redirectUris: oidcClients.redirectUris,
  postLogoutRedirectUris: oidcClients.postLogoutRedirectUris,
  grantTypes: oidcClients.grantTypes,
  tokenEndpointAuthMethod: oidcClients.tokenEndpointAuthMethod,
  corsOrigins: oidcClients.corsOrigins,
  accessTokenTtl: oidcClients.accessTokenTtl,
  idTokenTtl: oidcClients.idTokenTtl,
  refreshTokenTtl: oidcClients.refreshTokenTtl,
  createdAt: oidcClients.createdAt,
  updatedAt: oidcClients.updatedAt,
};
export type ClientRow = {
  id: string;
  /** Null for Keyward's built-in clients. */
  organizationId: string | null;
  builtIn: boolean;
  allowedApiScopes: string[];
  clientId: string;
  name: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: string[];
  tokenEndpointAuthMethod: string;
  corsOrigins: string[];
  accessTokenTtl: number;
  idTokenTtl: number;
  refreshTokenTtl: number;
  createdAt: Date;
  updatedAt: Date;
};

export interface ClientView extends ClientRow {
  public: boolean;
}

// Client ids are ours ("kwc_" + hex); anything else cannot name a client (and never reaches SQL).
const CLIENT_ID = /^[A-Za-z0-9_.-]{1,64}$/;
export const isClientId = (v: unknown): v is string => typeof v === "string" && CLIENT_ID.test(v);

export const view = (c: ClientRow): ClientView => ({ ...c, public: c.tokenEndpointAuthMethod === "none" });
/** A stored client in the shape registration validates, so an update's result is checked by the same rules. */
const fieldsOf = (c: ClientRow) => ({
  name: c.name,
  redirectUris: c.redirectUris,
  postLogoutRedirectUris: c.postLogoutRedirectUris,
  grantTypes: c.grantTypes,
  public: c.tokenEndpointAuthMethod === "none",
  corsOrigins: c.corsOrigins,
  accessTokenTtl: c.accessTokenTtl,
  idTokenTtl: c.idTokenTtl,
  refreshTokenTtl: c.refreshTokenTtl,
});
const secretContext = (clientId: string) => `oidc-client:${clientId}`;

/** Keyward-specific client metadata oidc-provider carries through (extraClientMetadata). */
export const CLIENT_EXTRA = ["urn:keyward:organization_id", "urn:keyward:cors_origins", "urn:keyward:ttl", "urn:keyward:api_scopes", "urn:keyward:built_in"] as const;

/** OIDC relying parties, registered per organization by its admins. Secrets are shown once and stored sealed. */
export class OidcClientsService {
  /**
   * The provider reads its client on every request: prepared once. A deleted organization's
   * clients stop working with it (built-in clients have no organization).
   */
  private readonly findLiveClient = this.db
    .select({ ...clientColumns, sealed: oidcClients.clientSecretSealed })
    .from(oidcClients)
    .leftJoin(organizations, eq(organizations.id, oidcClients.organizationId))
    .where(and(eq(oidcClients.clientId, sql.placeholder("clientId")), live(oidcClients), live(organizations)))
    .prepare("oidc_client_find_live");

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly box: SecretBox,
  ) {}

  async list(ctx: RequestContext, orgId: string): Promise<ClientView[]> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    const rows = await this.db.select(clientColumns).from(oidcClients).where(and(eq(oidcClients.organizationId, id), live(oidcClients))).orderBy(oidcClients.name);
    return rows.map(view);
  }

  async get(ctx: RequestContext, orgId: string, clientId: string): Promise<ClientView> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    return view(await this.find(id, clientId));
  }

  async create(ctx: RequestContext, orgId: string, input: unknown): Promise<ClientView & { clientSecret: string | null }> {
    const { orgId: id, actor } = await requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    const data = parseInput(createClientSchema, input);
    const clientId = `kwc_${randomHex(12)}`;
    const secret = data.public ? null : randomToken(32);
    return this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const [row] = await tx
        .insert(oidcClients)
        .values({
          organizationId: id,
          clientId,
          name: data.name,
          redirectUris: data.redirectUris,
          postLogoutRedirectUris: data.postLogoutRedirectUris,
          grantTypes: data.grantTypes,
          tokenEndpointAuthMethod: data.public ? "none" : "client_secret_basic",
          clientSecretSealed: secret ? this.box.encrypt(secret, secretContext(clientId)) : null,
          corsOrigins: data.corsOrigins,
          accessTokenTtl: data.accessTokenTtl,
          idTokenTtl: data.idTokenTtl,
          refreshTokenTtl: data.refreshTokenTtl,
          createdBy: actor.userId,
          createdAt: now,
          updatedAt: now,
        })
        .returning(clientColumns);
      await this.audit.record(tx, ctx, AuditAction.oidcClientCreated, { organizationId: id, resourceType: "oidc_client", resourceId: clientId, metadata: { name: data.name, public: data.public } });
      return { ...view(row!), clientSecret: secret };
    });
  }

  async update(ctx: RequestContext, orgId: string, clientId: string, input: unknown): Promise<ClientView> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    const data = parseInput(updateClientSchema, input);
    return this.db.transaction(async (tx) => {
      // Locked: two concurrent updates, each valid alone, must not combine into an invalid client.
      const current = await this.find(id, clientId, tx, true);
      // The client as it would be after the update must pass the rules a registration passes.
      parseInput(clientSchema, { ...fieldsOf(current), ...data });
      const [row] = await tx.update(oidcClients).set({ ...data, updatedAt: this.clock.now() }).where(eq(oidcClients.id, current.id)).returning(clientColumns);
      await this.audit.record(tx, ctx, AuditAction.oidcClientUpdated, { organizationId: id, resourceType: "oidc_client", resourceId: current.clientId, metadata: { fields: Object.keys(data) } });
      return view(row!);
    });
  }

  /** A new secret, shown once; the old one stops working at once. */
  async rotateSecret(ctx: RequestContext, orgId: string, clientId: string): Promise<{ clientId: string; clientSecret: string }> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    return this.db.transaction(async (tx) => {
      const current = await this.find(id, clientId, tx);
      if (current.tokenEndpointAuthMethod === "none") throw ClientErrors.notConfidential();
      const secret = randomToken(32);
      await tx.update(oidcClients).set({ clientSecretSealed: this.box.encrypt(secret, secretContext(current.clientId)), updatedAt: this.clock.now() }).where(eq(oidcClients.id, current.id));
      await this.audit.record(tx, ctx, AuditAction.oidcClientSecretRotated, { organizationId: id, resourceType: "oidc_client", resourceId: current.clientId });
      return { clientId: current.clientId, clientSecret: secret };
    });
  }

  /** Deletes a client and every token and grant issued to it. */
  async delete(ctx: RequestContext, orgId: string, clientId: string): Promise<void> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    await this.db.transaction(async (tx) => {
      const current = await this.find(id, clientId, tx);
      const now = this.clock.now();
      await tx.update(oidcClients).set({ deletedAt: now, updatedAt: now }).where(eq(oidcClients.id, current.id));
      await tx.delete(oidcPayloads).where(eq(sqlClientId(), current.clientId));
      await tx.delete(oidcConsents).where(eq(oidcConsents.clientId, current.clientId));
      await this.audit.record(tx, ctx, AuditAction.oidcClientDeleted, { organizationId: id, resourceType: "oidc_client", resourceId: current.clientId });
    });
  }

  /** The client as oidc-provider wants it (the adapter's Client model); undefined when unknown or deleted. */
  async providerMetadata(clientId: string): Promise<Record<string, unknown> | undefined> {
    if (!isClientId(clientId)) return undefined;
    const [row] = await this.findLiveClient.execute({ clientId });
    if (!row) return undefined;
    const isPublic = row.tokenEndpointAuthMethod === "none";
    // Defence in depth: a public client has no secret, so client_credentials would hand tokens to
    // anyone who knows its id. Registration and update refuse the combination; a row that has it
    // anyway (older data, a manual edit) still never gets that grant.
    const grantTypes = isPublic ? row.grantTypes.filter((g) => g !== "client_credentials") : row.grantTypes;
    // Private-use schemes (com.example.app:/cb) belong to native apps; http(s) URIs stay "web",
    // which keeps loopback redirects matched exactly, port included.
    // which keeps loopback redirects matched exactly, port included. Built-in clients are native
    // apps (the CLI listens on whichever loopback port is free).
    const native = row.builtIn || row.redirectUris.some((u) => !/^https?:/i.test(u));
    return {
      client_id: row.clientId,
      application_type: native ? "native" : "web",
      client_name: row.name,
      ...(row.sealed ? { client_secret: this.box.decryptString(row.sealed, secretContext(row.clientId)) } : {}),
      token_endpoint_auth_method: row.tokenEndpointAuthMethod,
      redirect_uris: row.redirectUris,
      post_logout_redirect_uris: row.postLogoutRedirectUris,
      grant_types: grantTypes,
      response_types: grantTypes.includes("authorization_code") ? ["code"] : [],
      "urn:keyward:organization_id": row.organizationId,
      "urn:keyward:cors_origins": row.corsOrigins,
      "urn:keyward:ttl": { AccessToken: row.accessTokenTtl, IdToken: row.idTokenTtl, RefreshToken: row.refreshTokenTtl },
      "urn:keyward:api_scopes": row.allowedApiScopes,
      "urn:keyward:built_in": row.builtIn,
    };
  }

  /** The signed-in user's remembered consents. */
  async myConsents(ctx: RequestContext) {
    const actor = requireUser(ctx);
    return this.db
      .select({ clientId: oidcConsents.clientId, clientName: oidcClients.name, scopes: oidcConsents.scopes, updatedAt: oidcConsents.updatedAt })
      .from(oidcConsents)
      .innerJoin(oidcClients, eq(oidcClients.clientId, oidcConsents.clientId))
      .where(eq(oidcConsents.userId, actor.userId));
  }

  /** Withdraws consent: the next authorization asks again, and the client's grants for this user end. */
  async revokeConsent(ctx: RequestContext, clientId: string): Promise<void> {
    const actor = requirePersonalUser(ctx);
    if (!isClientId(clientId)) throw ClientErrors.consentNotFound();
    await this.db.transaction(async (tx) => {
      const rows = await tx.delete(oidcConsents).where(and(eq(oidcConsents.userId, actor.userId), eq(oidcConsents.clientId, clientId))).returning({ clientId: oidcConsents.clientId });
      if (rows.length === 0) throw ClientErrors.consentNotFound();
      await tx.delete(oidcPayloads).where(and(eq(sqlClientId(), clientId), eq(sqlAccountId(), actor.userId)));
      await this.audit.record(tx, ctx, AuditAction.oidcConsentRevoked, { resourceType: "oidc_client", resourceId: clientId });
    });
  }

  /** Deletes expired provider rows (codes, tokens, sessions, interactions): the purge job. */
  async purgeExpired(): Promise<number> {
    const now = this.clock.now().toISOString();
    const rows = await this.db
      .delete(oidcPayloads)
      .where(sql`${oidcPayloads.expiresAt} is not null and ${oidcPayloads.expiresAt} < ${now}::timestamptz`)
      .returning({ id: oidcPayloads.id });
    await this.db.delete(oidcRefreshTokens).where(sql`${oidcRefreshTokens.expiresAt} is not null and ${oidcRefreshTokens.expiresAt} < ${now}::timestamptz`);
    return rows.length;
  }

  private async find(orgId: string, clientId: string, db: Parameters<typeof requireOrgAccess>[0] = this.db, forUpdate = false): Promise<ClientRow> {
    if (!isClientId(clientId)) throw ClientErrors.notFound();
    const query = db
      .select(clientColumns)
      .from(oidcClients)
      .where(and(eq(oidcClients.organizationId, orgId), eq(oidcClients.clientId, clientId), live(oidcClients)));
    const [row] = forUpdate ? await query.for("update") : await query;
    if (!row) throw ClientErrors.notFound();
    return row;
  }
}

// Tokens, codes and grants carry clientId and accountId inside their payload.
const sqlClientId = () => sql<string>`${oidcPayloads.payload}->>'clientId'`;
const sqlAccountId = () => sql<string>`${oidcPayloads.payload}->>'accountId'`;
