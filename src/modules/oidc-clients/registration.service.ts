import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { randomHex, randomToken, type SecretBox, sealContexts, sha256Hex } from "../../lib/crypto/index.js";
import type { RequestContext, UserActor } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { OrgErrors } from "../orgs/index.js";
import { changingClient } from "./client-cache.js";
import { ClientErrors, RegistrationErrors } from "./oidc-clients.errors.js";
import { oidcClientsRepository, type ClientRow } from "./oidc-clients.repository.js";
import { clientSchema, createClientSchema, createRegistrationTokenSchema, registrationSchema, type CreateRegistrationTokenInput } from "./oidc-clients.schemas.js";
import { fieldsOf, view, type ClientView } from "./oidc-clients.service.js";
import { oidcConsentsRepository } from "./oidc-consents.repository.js";
import { oidcPayloadsRepository } from "./oidc-payloads.repository.js";
import { registrationTokensRepository, type RegistrationTokenRow } from "./registration-tokens.repository.js";
import { requireOrgAccess, requirePersonalUser } from "../access/index.js";

/** Recognisable by secret scanners, as API keys are (kwk_); the part after the public id is the 256-bit secret. */
export const REGISTRATION_TOKEN_PREFIX = "kwr_";

export type RegistrationTokenView = RegistrationTokenRow;

/** A registration as the provider hands it over: the identity it minted, and what the client says about itself. */
export interface Registration {
  clientId: string;
  /** Confidential clients: the secret the provider minted (sealed at rest, like an admin-created client's). */
  clientSecret: string | null;
  /** registrationSchema's fields (name, redirectUris, postLogoutRedirectUris, grantTypes, tokenEndpointAuthMethod, idTokenSignedResponseAlg). */
  fields: unknown;
}

const secretContext = sealContexts.oidcClientSecret;

/**
 * Dynamic Client Registration (RFC 7591) and its management (RFC 7592), never open: an
 * organization's admins (or a superadmin) issue initial access tokens, shown once and stored as
 * SHA-256 hashes, and each registration spends one. A registered client belongs to the token's
 * organization and obeys the rules of a client its admins create (the same schema); its CORS
 * origins, lifetimes and API scopes stay theirs to set. The provider (src/oidc) calls the
 * registration methods; the doors call the token methods.
 */
export class OidcRegistrationService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly box: SecretBox,
    private readonly options: { enabled: boolean },
  ) {}

  async listTokens(ctx: RequestContext, orgId: string): Promise<RegistrationTokenView[]> {
    const { orgId: id } = await this.access(ctx, orgId);
    return registrationTokensRepository.listForOrganization(this.db, id);
  }

  /** Issues a token; the returned `token` is the only time it is ever seen. */
  async createToken(ctx: RequestContext, orgId: string, input: CreateRegistrationTokenInput): Promise<RegistrationTokenView & { token: string }> {
    const { orgId: id, actor } = await this.access(ctx, orgId);
    // Issuing tokens nothing can use would only leave secrets lying around.
    if (!this.options.enabled) throw RegistrationErrors.disabled();
    const data = parseInput(createRegistrationTokenSchema, input);
    const prefix = `${REGISTRATION_TOKEN_PREFIX}${randomHex(6)}`;
    const token = `${prefix}_${randomToken(32)}`;
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const row = await registrationTokensRepository.insert(tx, {
        organizationId: id,
        name: data.name,
        prefix,
        tokenHash: sha256Hex(token),
        maxUses: data.maxUses ?? null,
        expiresAt: new Date(now.getTime() + data.expiresIn * 1000),
        createdBy: actor.userId,
        now,
      });
      await this.audit.record(tx, ctx, AuditAction.oidcRegistrationTokenCreated, {
        organizationId: id,
        resourceType: "oidc_registration_token",
        resourceId: row.id,
        metadata: { name: data.name, prefix, expires_at: row.expiresAt.toISOString(), max_uses: row.maxUses, by_superadmin: actor.isSuperadmin },
      });
      return { ...row, token };
    });
  }

  /** Revokes a token at once: no further registration with it (the clients it registered stay). */
  async revokeToken(ctx: RequestContext, orgId: string, tokenId: string): Promise<RegistrationTokenView> {
    const { orgId: id } = await this.access(ctx, orgId);
    const tid = parseId(tokenId, RegistrationErrors.tokenNotFound);
    return this.db.transaction(async (tx) => {
      // Locked: two revocations at once answer one success and one ALREADY_REVOKED.
      const current = await registrationTokensRepository.find(tx, id, tid, { forUpdate: true });
      if (!current) throw RegistrationErrors.tokenNotFound();
      if (current.revokedAt) throw RegistrationErrors.alreadyRevoked();
      const row = await registrationTokensRepository.revoke(tx, tid, this.clock.now());
      await this.audit.record(tx, ctx, AuditAction.oidcRegistrationTokenRevoked, { organizationId: id, resourceType: "oidc_registration_token", resourceId: tid, metadata: { name: row.name, prefix: row.prefix } });
      return row;
    });
  }

  /** The registration endpoint's first check: is this a token that may register a client now? */
  async usableToken(presented: string): Promise<{ id: string; createdAt: Date; expiresAt: Date } | null> {
    // Not shaped like a token (or absurdly long): no hashing, no query.
    if (!presented.startsWith(REGISTRATION_TOKEN_PREFIX) || presented.length > 200) return null;
    const row = await registrationTokensRepository.findUsable(this.db, sha256Hex(presented), this.clock.now());
    return row ? { id: row.id, createdAt: row.createdAt, expiresAt: row.expiresAt } : null;
  }

  /**
   * Registers a client with an initial access token (RFC 7591 §3). The token's use is spent in the
   * transaction that stores the client, so a refused client spends nothing, and registrations
   * racing for a token's last use get one client between them.
   */
  async registerClient(ctx: RequestContext, presented: string, registration: Registration): Promise<ClientView> {
    const fields = parseInput(registrationSchema, registration.fields);
    const { tokenEndpointAuthMethod, ...rest } = fields;
    // The same rules (and defaults) as a client an admin creates.
    const data = parseInput(createClientSchema, { ...rest, public: tokenEndpointAuthMethod === "none" });
    // A confidential client comes with the secret the provider minted, a public one with none.
    if (data.public !== (registration.clientSecret === null)) throw RegistrationErrors.authMethodFixed();
    const clientId = registration.clientId;
    const secret = registration.clientSecret;
    if (!presented.startsWith(REGISTRATION_TOKEN_PREFIX) || presented.length > 200) throw RegistrationErrors.tokenNotUsable();
    return this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const token = await registrationTokensRepository.spendUse(tx, sha256Hex(presented), now);
      if (!token) throw RegistrationErrors.tokenNotUsable();
      const row = await oidcClientsRepository.insert(tx, {
        organizationId: token.organizationId,
        clientId,
        name: data.name,
        redirectUris: data.redirectUris,
        postLogoutRedirectUris: data.postLogoutRedirectUris,
        grantTypes: data.grantTypes,
        tokenEndpointAuthMethod,
        clientSecretSealed: secret ? this.box.encrypt(secret, secretContext(clientId)) : null,
        corsOrigins: data.corsOrigins,
        accessTokenTtl: data.accessTokenTtl,
        idTokenTtl: data.idTokenTtl,
        refreshTokenTtl: data.refreshTokenTtl,
        idTokenSignedResponseAlg: data.idTokenSignedResponseAlg,
        registrationTokenId: token.id,
        createdBy: null,
        createdAt: now,
        updatedAt: now,
      });
      await this.audit.record(tx, ctx, AuditAction.oidcClientCreated, {
        organizationId: token.organizationId,
        resourceType: "oidc_client",
        resourceId: clientId,
        metadata: { name: data.name, public: data.public, dynamic: true, registration_token_id: token.id, registration_token_prefix: token.prefix },
      });
      return view(row);
    });
  }

  /**
   * Replaces what a registered client says about itself (RFC 7592 §2.2), checked as a registration is.
   * `unknown`, like a registration's `fields`: it is oidc-provider's client metadata, not a caller's input.
   */
  async updateRegisteredClient(ctx: RequestContext, clientId: string, input: unknown): Promise<ClientView> {
    const fields = parseInput(registrationSchema, input);
    const { tokenEndpointAuthMethod, ...rest } = fields;
    return changingClient(clientId, () =>
      this.db.transaction(async (tx) => {
        // Locked: two updates at once must not combine into a client neither asked for.
        const current = await this.findRegistered(tx, clientId, true);
        // A client cannot change between public and confidential: its secret would appear or vanish.
        if ((current.tokenEndpointAuthMethod === "none") !== (tokenEndpointAuthMethod === "none")) throw RegistrationErrors.authMethodFixed();
        parseInput(clientSchema, { ...fieldsOf(current), ...rest });
        const row = await oidcClientsRepository.update(tx, current.id, { ...rest, tokenEndpointAuthMethod, updatedAt: this.clock.now() });
        await this.audit.record(tx, ctx, AuditAction.oidcClientUpdated, { organizationId: current.organizationId ?? undefined, resourceType: "oidc_client", resourceId: clientId, metadata: { fields: Object.keys(fields), dynamic: true } });
        return view(row);
      }),
    );
  }

  /** A registered client deletes itself (RFC 7592 §2.3): it and every token issued to it are gone. */
  async deleteRegisteredClient(ctx: RequestContext, clientId: string): Promise<void> {
    await changingClient(clientId, () =>
      this.db.transaction(async (tx) => {
        const current = await this.findRegistered(tx, clientId, true);
        await oidcClientsRepository.softDelete(tx, current.id, this.clock.now());
        await oidcPayloadsRepository.deleteForClient(tx, clientId);
        await oidcConsentsRepository.deleteForClient(tx, clientId);
        await this.audit.record(tx, ctx, AuditAction.oidcClientDeleted, { organizationId: current.organizationId ?? undefined, resourceType: "oidc_client", resourceId: clientId, metadata: { dynamic: true } });
      }),
    );
  }

  /**
   * Who may issue and revoke an organization's tokens: its admins, and superadmins for any live
   * organization, member or not (audited as such). Never a delegated token.
   */
  private async access(ctx: RequestContext, orgId: string): Promise<{ orgId: string; actor: UserActor }> {
    const actor = requirePersonalUser(ctx);
    if (!actor.isSuperadmin) return requireOrgAccess(this.db, ctx, orgId, "clients.manage");
    const id = parseId(orgId, OrgErrors.notFound);
    if (!(await registrationTokensRepository.organizationIsLive(this.db, id))) throw OrgErrors.notFound();
    return { orgId: id, actor };
  }

  private async findRegistered(db: Parameters<typeof oidcClientsRepository.findRegistered>[0], clientId: string, forUpdate: boolean): Promise<ClientRow> {
    const row = await oidcClientsRepository.findRegistered(db, clientId, { forUpdate });
    if (!row) throw ClientErrors.notFound();
    return row;
  }
}

