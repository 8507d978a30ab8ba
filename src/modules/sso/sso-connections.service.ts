import type { z } from "zod";
import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { clientAssertionAlg, type SecretBox, sealContexts, uuid } from "../../lib/crypto/index.js";
import { CommonErrors } from "../../lib/errors.js";
import type { RequestContext, UserActor } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import type { OidcConnectionConfig, SsoGroupMapping } from "../../../schema/index.js";
import { AccessErrors, requireOrgAccess, requireUser } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { organizationExists } from "../orgs/index.js";
import { SsoIdpError, type OidcConnectionClient } from "./oidc-connection.client.js";
import { ssoConnectionsRepository as repo, type ConnectionChanges, type ConnectionRow, type NewConnection } from "./sso-connections.repository.js";
import { SsoErrors } from "./sso.errors.js";
import { buildSamlConnection, samlChanges } from "./saml-connection.builder.js";
import { samlConfigOf, samlView, type SamlConnectionView } from "./saml-config.js";
import {
  createOidcConnectionSchema,
  createSamlConnectionSchema,
  updateSsoConnectionSchema,
  type CreateOidcConnectionInput,
  type CreateSamlConnectionInput,
  type SsoRole,
  type UpdateSsoConnectionInput,
} from "./sso.schemas.js";

/** The settings an OpenID Connect and a SAML connection share. */
type SharedSettings = Pick<z.output<typeof createOidcConnectionSchema>, "name" | "enabled" | "defaultRole" | "groupMappings" | "requireSso" | "sessionMaxAgeSeconds">;

/** A connection as its organization's admins see it: never its secret, only whether one is stored. */
export interface SsoConnectionView {
  id: string;
  organizationId: string;
  kind: "oidc" | "saml";
  name: string;
  enabled: boolean;
  defaultRole: SsoRole;
  groupMappings: SsoGroupMapping[];
  requireSso: boolean;
  sessionMaxAgeSeconds: number;
  issuer: string | null;
  clientId: string | null;
  authMethod: string | null;
  allowedIdTokenAlgs: string[];
  scopes: string[];
  emailClaim: string | null;
  nameClaim: string | null;
  groupsClaim: string | null;
  hasSecret: boolean;
  /** A SAML connection's settings and the SP values to give its IdP (null for OpenID Connect). */
  saml: SamlConnectionView | null;
  /** Where the identity provider must send people back (register it there). */
  redirectUri: string;
  /** OpenID Connect: the back-channel logout URI to register at the provider (null for SAML: see saml.sloUrl). */
  backchannelLogoutUri: string | null;
  /** Starts a sign-in through this connection (an address for a "sign in with" link). */
  startUrl: string;
  createdAt: Date;
  updatedAt: Date;
}

export const oidcConfigOf = (row: Pick<ConnectionRow, "config">): OidcConnectionConfig => row.config as unknown as OidcConnectionConfig;

const audited = (r: ConnectionRow, metadata: Record<string, unknown> = {}) => ({
  organizationId: r.organizationId,
  resourceType: "sso_connection",
  resourceId: r.id,
  metadata: { name: r.name, kind: r.kind, ...metadata },
});

export interface SsoConnectionsDeps {
  db: Db;
  clock: Clock;
  box: SecretBox;
  audit: AuditService;
  client: OidcConnectionClient;
  publicUrl: string;
}

/**
 * An organization's identity-provider connections (issue 35), managed by its owners and admins
 * (`sso.manage`) and by superadmins. Secrets are write-only: sealed, bound to the connection id.
 */
export class SsoConnectionsService {
  constructor(private readonly deps: SsoConnectionsDeps) {}

  callbackUrl(): string {
    return new URL("/sso/oidc/callback", this.deps.publicUrl).toString();
  }

  async list(ctx: RequestContext, orgId: string): Promise<SsoConnectionView[]> {
    const { orgId: id } = await this.access(ctx, orgId);
    return (await repo.listForOrganization(this.deps.db, id)).map((r) => this.view(r));
  }

  async get(ctx: RequestContext, orgId: string, connectionId: string): Promise<SsoConnectionView> {
    const { orgId: id } = await this.access(ctx, orgId);
    const row = await repo.find(this.deps.db, id, parseId(connectionId, SsoErrors.notFound));
    if (!row) throw SsoErrors.notFound();
    return this.view(row);
  }

  /** Creates an OpenID Connect connection after reading the provider's discovery document. */
  async createOidc(ctx: RequestContext, orgId: string, input: CreateOidcConnectionInput): Promise<SsoConnectionView> {
    const { orgId: id, actor } = await this.access(ctx, orgId);
    const data = parseInput(createOidcConnectionSchema, input);
    const authMethod = data.authMethod ?? "client_secret_basic";
    const secret = this.secretFor(authMethod, data);
    if (!secret) throw SsoErrors.secretRequired();
    const discovered = await this.discover(data.issuer, data.clientId);
    const config: OidcConnectionConfig = {
      issuer: discovered.issuer,
      clientId: data.clientId,
      authMethod,
      allowedIdTokenAlgs: data.allowedIdTokenAlgs ?? ["RS256"],
      scopes: withOpenid(data.scopes ?? ["openid", "email", "profile"]),
      claims: { email: data.emailClaim ?? "email", name: data.nameClaim ?? "name", groups: data.groupsClaim ?? "groups" },
    };
    const now = this.deps.clock.now();
    const connectionId = uuid();
    return this.deps.db.transaction(async (tx) => {
      const row = await repo.insert(tx, this.newRow({ connectionId, organizationId: id, kind: "oidc", data, config, secret, createdBy: actor.userId, now }));
      await this.deps.audit.record(tx, ctx, AuditAction.ssoConnectionCreated, audited(row, { issuer: config.issuer, requireSso: row.requireSso, enabled: row.enabled }));
      return this.view(row);
    });
  }

  /**
   * Creates a SAML connection: the IdP from its metadata URL (read now, re-read by a job), a metadata
   * document, or entity id + SSO URL + certificates; a fresh SP signing and encryption key, sealed.
   */
  async createSaml(ctx: RequestContext, orgId: string, input: CreateSamlConnectionInput): Promise<SsoConnectionView> {
    const { orgId: id, actor } = await this.access(ctx, orgId);
    const data = parseInput(createSamlConnectionSchema, input);
    const now = this.deps.clock.now();
    const connectionId = uuid();
    const { config, keys } = await buildSamlConnection(data, connectionId, now);
    return this.deps.db.transaction(async (tx) => {
      const row = await repo.insert(tx, this.newRow({ connectionId, organizationId: id, kind: "saml", data, config, secret: JSON.stringify(keys), createdBy: actor.userId, now }));
      await this.deps.audit.record(tx, ctx, AuditAction.ssoConnectionCreated, audited(row, { idpEntityId: config.idpEntityId, requireSso: row.requireSso, enabled: row.enabled }));
      return this.view(row);
    });
  }

  /** A new connection's row: the settings both kinds share (with their defaults), its kind's config, and its secret sealed to it. */
  private newRow(v: { connectionId: string; organizationId: string; kind: "oidc" | "saml"; data: SharedSettings; config: object; secret: string; createdBy: string; now: Date }): NewConnection {
    const { data } = v;
    return {
      id: v.connectionId,
      organizationId: v.organizationId,
      kind: v.kind,
      name: data.name,
      enabled: data.enabled ?? true,
      defaultRole: data.defaultRole ?? "member",
      groupMappings: data.groupMappings ?? [],
      requireSso: data.requireSso ?? false,
      sessionMaxAgeSeconds: data.sessionMaxAgeSeconds ?? 28800,
      config: { ...v.config },
      secretSealed: this.deps.box.encrypt(v.secret, sealContexts.ssoConnectionSecret(v.connectionId)),
      createdBy: v.createdBy,
      createdAt: v.now,
      updatedAt: v.now,
    };
  }

  async update(ctx: RequestContext, orgId: string, connectionId: string, input: UpdateSsoConnectionInput): Promise<SsoConnectionView> {
    const { orgId: id } = await this.access(ctx, orgId);
    const cid = parseId(connectionId, SsoErrors.notFound);
    const data = parseInput(updateSsoConnectionSchema, input);
    const current = await repo.find(this.deps.db, id, cid);
    if (!current) throw SsoErrors.notFound();
    const { name, enabled, defaultRole, groupMappings, requireSso, sessionMaxAgeSeconds } = data;
    const changes: ConnectionChanges = { updatedAt: this.deps.clock.now(), ...definedOnly({ name, enabled, defaultRole, groupMappings, requireSso, sessionMaxAgeSeconds }) };
    if (current.kind === "oidc") this.oidcChanges(cid, oidcConfigOf(current), data, changes);
    else changes.config = { ...samlChanges(samlConfigOf(current), data) };
    return this.deps.db.transaction(async (tx) => {
      const row = await repo.update(tx, id, cid, changes);
      if (!row) throw SsoErrors.notFound();
      const fields = Object.keys(data).filter((k) => k !== "clientSecret" && k !== "privateKey");
      await this.deps.audit.record(tx, ctx, AuditAction.ssoConnectionUpdated, audited(row, { fields, secretChanged: changes.secretSealed !== undefined }));
      return this.view(row);
    });
  }

  /** The OpenID Connect settings an update changes, and a new sealed credential when one is given. */
  private oidcChanges(cid: string, before: OidcConnectionConfig, data: z.output<typeof updateSsoConnectionSchema>, changes: ConnectionChanges): void {
    const authMethod = data.authMethod ?? before.authMethod;
    const config: OidcConnectionConfig = {
      ...before,
      clientId: data.clientId ?? before.clientId,
      authMethod,
      allowedIdTokenAlgs: data.allowedIdTokenAlgs ?? before.allowedIdTokenAlgs,
      scopes: data.scopes ? withOpenid(data.scopes) : before.scopes,
      claims: { email: data.emailClaim ?? before.claims.email, name: data.nameClaim ?? before.claims.name, groups: data.groupsClaim ?? before.claims.groups },
    };
    changes.config = { ...config };
    const secret = this.secretFor(authMethod, data);
    // Another kind of credential needs its own value: the stored one is of the old kind.
    if (!secret && authMethod !== before.authMethod && (authMethod === "private_key_jwt" || before.authMethod === "private_key_jwt")) throw SsoErrors.secretRequired();
    if (secret) changes.secretSealed = this.deps.box.encrypt(secret, sealContexts.ssoConnectionSecret(cid));
  }

  async setEnabled(ctx: RequestContext, orgId: string, connectionId: string, enabled: boolean): Promise<SsoConnectionView> {
    return this.update(ctx, orgId, connectionId, { enabled });
  }

  /** Removes a connection: its people keep their accounts (an admin can set a password or send a reset). */
  async remove(ctx: RequestContext, orgId: string, connectionId: string): Promise<SsoConnectionView> {
    const { orgId: id } = await this.access(ctx, orgId);
    const cid = parseId(connectionId, SsoErrors.notFound);
    return this.deps.db.transaction(async (tx) => {
      const row = await repo.softDelete(tx, id, cid, this.deps.clock.now());
      if (!row) throw SsoErrors.notFound();
      await this.deps.audit.record(tx, ctx, AuditAction.ssoConnectionDeleted, audited(row));
      return this.view(row);
    });
  }

  view(r: ConnectionRow): SsoConnectionView {
    const saml = r.kind === "saml" ? samlView(r, this.deps.publicUrl, this.deps.clock.now()) : null;
    return {
      id: r.id,
      organizationId: r.organizationId,
      kind: r.kind === "saml" ? "saml" : "oidc",
      name: r.name,
      enabled: r.enabled,
      defaultRole: r.defaultRole as SsoRole,
      groupMappings: r.groupMappings,
      requireSso: r.requireSso,
      sessionMaxAgeSeconds: r.sessionMaxAgeSeconds,
      ...oidcFields(r.kind === "oidc" ? oidcConfigOf(r) : null),
      hasSecret: r.hasSecret,
      saml,
      redirectUri: saml ? saml.acsUrl : this.callbackUrl(),
      backchannelLogoutUri: saml ? null : new URL(`/sso/oidc/${r.id}/backchannel-logout`, this.deps.publicUrl).toString(),
      startUrl: new URL(`/sso/start/${r.id}`, this.deps.publicUrl).toString(),
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
    };
  }

  private secretFor(method: string, data: { clientSecret?: string; privateKey?: string }): string | null {
    if (method === "private_key_jwt") {
      if (!data.privateKey) return null;
      if (!clientAssertionAlg(data.privateKey)) throw CommonErrors.validation([{ path: "privateKey", message: "a PKCS#8 PEM RSA or EC (P-256, P-384, P-521) private key" }]);
      return data.privateKey;
    }
    return data.clientSecret ?? null;
  }

  private async discover(issuer: string, clientId: string): Promise<{ issuer: string }> {
    try {
      const found = await this.deps.client.discover(issuer, clientId);
      return { issuer: found.issuer };
    } catch (e) {
      throw SsoErrors.discoveryFailed(e instanceof SsoIdpError ? e.reason : "it could not be loaded");
    }
  }

  /** Guard order as for domains: signed in; superadmins reach any live organization; others need `sso.manage` there. */
  private async access(ctx: RequestContext, orgId: unknown): Promise<{ orgId: string; actor: UserActor }> {
    const actor = requireUser(ctx);
    if (actor.isSuperadmin && !actor.delegation) {
      const id = parseId(orgId, AccessErrors.orgNotFound);
      if (!(await organizationExists(this.deps.db, id))) throw AccessErrors.orgNotFound();
      return { orgId: id, actor };
    }
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "sso.manage");
    return { orgId: access.orgId, actor: access.actor };
  }
}

/** The OpenID Connect part of a view (empty for a SAML connection). */
function oidcFields(oidc: OidcConnectionConfig | null) {
  return {
    issuer: oidc?.issuer ?? null,
    clientId: oidc?.clientId ?? null,
    authMethod: oidc?.authMethod ?? null,
    allowedIdTokenAlgs: oidc?.allowedIdTokenAlgs ?? [],
    scopes: oidc?.scopes ?? [],
    emailClaim: oidc?.claims.email ?? null,
    nameClaim: oidc?.claims.name ?? null,
    groupsClaim: oidc?.claims.groups ?? null,
  };
}

/** The fields given (an absent one keeps its stored value). */
function definedOnly<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const withOpenid = (scopes: string[]) => (scopes.includes("openid") ? scopes : ["openid", ...scopes]);
