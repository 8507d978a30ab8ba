import type { Clock } from "../../infra/clock.js";
import type { Db, Database } from "../../infra/db.js";
import { type SecretBox, sealContexts } from "../../lib/crypto/index.js";
import { newClientId, newClientSecret } from "./client-ids.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { AnnouncedCache } from "../../infra/announced-cache.js";
import { changingClient, createClientCache } from "./client-cache.js";
import { prepareLiveClientWithSecretPrivileged, type ClientWithSealedSecret } from "./oidc-clients.secrets.repository.js";
import { ClientErrors } from "./oidc-clients.errors.js";
import { oidcClientsRepository, type ClientRow } from "./oidc-clients.repository.js";
import { clientSchema, createClientSchema, updateClientSchema, type CreateClientInput, type UpdateClientInput } from "./oidc-clients.schemas.js";
import { oidcConsentsRepository, type ConsentView } from "./oidc-consents.repository.js";
import { oidcPayloadsRepository } from "./oidc-payloads.repository.js";
import { requireOrgAccess, requirePersonalUser, requireUser } from "../access/index.js";

export { ClientErrors } from "./oidc-clients.errors.js";
export type { ClientRow } from "./oidc-clients.repository.js";

export interface ClientView extends ClientRow {
  public: boolean;
}

// Client ids are ours ("kwc_" + hex); anything else cannot name a client (and never reaches SQL).
const CLIENT_ID = /^[A-Za-z0-9_.-]{1,64}$/;
export const isClientId = (v: unknown): v is string => typeof v === "string" && CLIENT_ID.test(v);

export const view = (c: ClientRow): ClientView => ({ ...c, public: c.tokenEndpointAuthMethod === "none" });
/** A stored client in the shape registration validates, so an update's result is checked by the same rules. */
export const fieldsOf = (c: ClientRow) => ({
  name: c.name,
  redirectUris: c.redirectUris,
  postLogoutRedirectUris: c.postLogoutRedirectUris,
  grantTypes: c.grantTypes,
  public: c.tokenEndpointAuthMethod === "none",
  corsOrigins: c.corsOrigins,
  accessTokenTtl: c.accessTokenTtl,
  idTokenTtl: c.idTokenTtl,
  refreshTokenTtl: c.refreshTokenTtl,
  idTokenSignedResponseAlg: c.idTokenSignedResponseAlg,
});
const secretContext = sealContexts.oidcClientSecret;

/** Keyward-specific client metadata oidc-provider carries through (extraClientMetadata). */
export const CLIENT_EXTRA = ["urn:keyward:organization_id", "urn:keyward:cors_origins", "urn:keyward:ttl", "urn:keyward:api_scopes", "urn:keyward:built_in"] as const;

/** OIDC relying parties, registered per organization by its admins. Secrets are shown once and stored sealed. */
export class OidcClientsService {
  /** The provider reads its client on every request: prepared once (privileged: it carries the sealed secret). */
  private readonly findLiveClient = prepareLiveClientWithSecretPrivileged(this.db);
  /** ...and rarely changes: kept in memory until a change is announced (client-cache.ts), its secret unsealed once. */
  private readonly providerClients: AnnouncedCache<Record<string, unknown>>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly box: SecretBox,
    cache: { changes: Pick<Database, "listen" | "db">; ttlMs: number },
  ) {
    this.providerClients = createClientCache(cache.changes, cache.ttlMs, (clientId) => this.loadProviderMetadata(clientId));
  }

  /** Stops serving clients from memory (the container closing). */
  close(): void {
    this.providerClients.close();
  }

  async list(ctx: RequestContext, orgId: string): Promise<ClientView[]> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    return (await oidcClientsRepository.listForOrg(this.db, id)).map(view);
  }

  async get(ctx: RequestContext, orgId: string, clientId: string): Promise<ClientView> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    return view(await this.find(this.db, id, clientId));
  }

  async create(ctx: RequestContext, orgId: string, input: CreateClientInput): Promise<ClientView & { clientSecret: string | null }> {
    const { orgId: id, actor } = await requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    const data = parseInput(createClientSchema, input);
    const clientId = newClientId();
    const secret = data.public ? null : newClientSecret();
    return this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const row = await oidcClientsRepository.insert(tx, {
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
        idTokenSignedResponseAlg: data.idTokenSignedResponseAlg,
        createdBy: actor.userId,
        createdAt: now,
        updatedAt: now,
      });
      await this.audit.record(tx, ctx, AuditAction.oidcClientCreated, { organizationId: id, resourceType: "oidc_client", resourceId: clientId, metadata: { name: data.name, public: data.public } });
      return { ...view(row), clientSecret: secret };
    });
  }

  async update(ctx: RequestContext, orgId: string, clientId: string, input: UpdateClientInput): Promise<ClientView> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    const data = parseInput(updateClientSchema, input);
    return changingClient(clientId, () => this.db.transaction(async (tx) => {
      // Locked: two concurrent updates, each valid alone, must not combine into an invalid client.
      const current = await this.find(tx, id, clientId, true);
      // The client as it would be after the update must pass the rules a registration passes.
      parseInput(clientSchema, { ...fieldsOf(current), ...data });
      const row = await oidcClientsRepository.update(tx, current.id, { ...data, updatedAt: this.clock.now() });
      await this.audit.record(tx, ctx, AuditAction.oidcClientUpdated, { organizationId: id, resourceType: "oidc_client", resourceId: current.clientId, metadata: { fields: Object.keys(data) } });
      return view(row);
    }));
  }

  /** A new secret, shown once; the old one stops working at once. */
  async rotateSecret(ctx: RequestContext, orgId: string, clientId: string): Promise<{ clientId: string; clientSecret: string }> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    return changingClient(clientId, () => this.db.transaction(async (tx) => {
      const current = await this.find(tx, id, clientId);
      if (current.tokenEndpointAuthMethod === "none") throw ClientErrors.notConfidential();
      const secret = newClientSecret();
      await oidcClientsRepository.replaceSealedSecret(tx, current.id, this.box.encrypt(secret, secretContext(current.clientId)), this.clock.now());
      await this.audit.record(tx, ctx, AuditAction.oidcClientSecretRotated, { organizationId: id, resourceType: "oidc_client", resourceId: current.clientId });
      return { clientId: current.clientId, clientSecret: secret };
    }));
  }

  /** Deletes a client and every token and grant issued to it. */
  async delete(ctx: RequestContext, orgId: string, clientId: string): Promise<void> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    await changingClient(clientId, () => this.db.transaction(async (tx) => {
      const current = await this.find(tx, id, clientId);
      await oidcClientsRepository.softDelete(tx, current.id, this.clock.now());
      await oidcPayloadsRepository.deleteForClient(tx, current.clientId);
      await oidcConsentsRepository.deleteForClient(tx, current.clientId);
      await this.audit.record(tx, ctx, AuditAction.oidcClientDeleted, { organizationId: id, resourceType: "oidc_client", resourceId: current.clientId });
    }));
  }

  /**
   * The client as oidc-provider wants it (the adapter's Client model), its secret included;
   * undefined when unknown or deleted. Only src/oidc/adapter.ts calls this.
   */
  async providerMetadata(clientId: string): Promise<Record<string, unknown> | undefined> {
    if (!isClientId(clientId)) return undefined;
    return this.providerClients.get(clientId);
  }

  private async loadProviderMetadata(clientId: string): Promise<Record<string, unknown> | undefined> {
    const [row] = await this.findLiveClient.execute({ clientId });
    if (!row) return undefined;
    const isPublic = row.tokenEndpointAuthMethod === "none";
    // Defence in depth: a public client has no secret, so client_credentials would hand tokens to
    // anyone who knows its id. Registration and update refuse the combination; a row that has it
    // anyway (older data, a manual edit) still never gets that grant.
    const grantTypes = isPublic ? row.grantTypes.filter((g) => g !== "client_credentials") : row.grantTypes;
    // Private-use schemes (com.example.app:/cb) belong to native apps; http(s) URIs stay "web",
    // which keeps loopback redirects matched exactly, port included. Built-in clients are native
    // apps (the CLI listens on whichever loopback port is free).
    const native = row.builtIn || row.redirectUris.some((u) => !/^https?:/i.test(u));
    const secret = this.clientSecretPrivileged(row);
    return {
      client_id: row.clientId,
      application_type: native ? "native" : "web",
      client_name: row.name,
      // A secret that never expires (RFC 7591 §3.2.1 names its expiry whenever there is one).
      ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
      token_endpoint_auth_method: row.tokenEndpointAuthMethod,
      redirect_uris: row.redirectUris,
      post_logout_redirect_uris: row.postLogoutRedirectUris,
      grant_types: grantTypes,
      response_types: grantTypes.includes("authorization_code") ? ["code"] : [],
      id_token_signed_response_alg: row.idTokenSignedResponseAlg,
      "urn:keyward:organization_id": row.organizationId,
      "urn:keyward:cors_origins": row.corsOrigins,
      "urn:keyward:ttl": { AccessToken: row.accessTokenTtl, IdToken: row.idTokenTtl, RefreshToken: row.refreshTokenTtl },
      "urn:keyward:api_scopes": row.allowedApiScopes,
      "urn:keyward:built_in": row.builtIn,
    };
  }

  /** The signed-in user's remembered consents. */
  async myConsents(ctx: RequestContext): Promise<ConsentView[]> {
    const actor = requireUser(ctx);
    return oidcConsentsRepository.listForUser(this.db, actor.userId);
  }

  /** Withdraws consent: the next authorization asks again, and the client's grants for this user end. */
  async revokeConsent(ctx: RequestContext, clientId: string): Promise<void> {
    const actor = requirePersonalUser(ctx);
    if (!isClientId(clientId)) throw ClientErrors.consentNotFound();
    await this.db.transaction(async (tx) => {
      if (!(await oidcConsentsRepository.delete(tx, actor.userId, clientId))) throw ClientErrors.consentNotFound();
      await oidcPayloadsRepository.deleteForClientAndAccount(tx, clientId, actor.userId);
      await this.audit.record(tx, ctx, AuditAction.oidcConsentRevoked, { resourceType: "oidc_client", resourceId: clientId });
    });
  }

  /** Deletes expired provider rows (codes, tokens, sessions, interactions): the purge job. */
  purgeExpired(): Promise<number> {
    return oidcPayloadsRepository.deleteExpired(this.db, this.clock.now());
  }

  /**
   * Privileged: the client's secret in clear (null for a public client). Its one use is handing
   * the client to oidc-provider, which authenticates the client with it; no API answer carries it.
   */
  private clientSecretPrivileged(row: ClientWithSealedSecret): string | null {
    return row.sealedSecret ? this.box.decryptString(row.sealedSecret, secretContext(row.clientId)) : null;
  }

  private async find(db: Parameters<typeof oidcClientsRepository.findInOrg>[0], orgId: string, clientId: string, forUpdate = false): Promise<ClientRow> {
    if (!isClientId(clientId)) throw ClientErrors.notFound();
    const row = await oidcClientsRepository.findInOrg(db, orgId, clientId, { forUpdate });
    if (!row) throw ClientErrors.notFound();
    return row;
  }
}
