import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { type SecretBox, sealContexts } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import { CommonErrors } from "../../lib/errors.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { ExternalAuthErrors } from "./external-auth.errors.js";
import { oauthProvidersRepository, type ProviderConfigRow } from "./oauth-providers.repository.js";
import { findProviderWithSecretPrivileged } from "./oauth-providers.secrets.repository.js";
import { PROVIDER_LABEL, PROVIDERS, providerConfigSchema, type ProviderName, type ProviderConfigInput } from "./external-auth.schemas.js";
import type { IdentityProviderClient, ProviderSettings } from "./providers/idp.types.js";
import { requireSuperadmin } from "../access/index.js";

export interface EnvProvider {
  clientId?: string;
  clientSecret?: string;
  scopes: string[];
}

/** What anyone may know about a provider (the sign-in page lists the active ones). */
export interface PublicProviderView {
  id: ProviderName;
  name: string;
  type: "oauth2" | "oidc";
  isConfigured: boolean;
  isActive: boolean;
  settings: { requiresDomain: boolean; supportsRefreshTokens: boolean };
}

/** A superadmin's view: never the secret, only whether one is set. */
export interface ProviderConfigView {
  provider: ProviderName;
  name: string;
  source: "database" | "environment" | "none";
  clientId: string | null;
  scopes: string[];
  isEnabled: boolean;
  hasClientSecret: boolean;
  callbackUrl: string;
  updatedAt: Date | null;
}

export interface OAuthProvidersDeps {
  db: Db;
  clock: Clock;
  box: SecretBox;
  audit: AuditService;
  clients: Record<ProviderName, IdentityProviderClient>;
  env: Record<ProviderName, EnvProvider>;
  callbackBase: string;
}


/** Binds a sealed secret to its provider: it cannot be replayed into another row. */
const secretContext = (provider: ProviderName) => sealContexts.oauthProviderSecret(provider);

/**
 * Which external providers are usable and with what credentials. A superadmin's configuration
 * (stored, secret sealed) wins; environment variables are the fallback when there is none.
 */
export class OAuthProvidersService {
  constructor(private readonly deps: OAuthProvidersDeps) {}

  parseProvider(value: unknown): ProviderName {
    if (typeof value !== "string" || !(PROVIDERS as readonly string[]).includes(value)) throw ExternalAuthErrors.unknownProvider();
    return value as ProviderName;
  }

  client(provider: ProviderName): IdentityProviderClient {
    return this.deps.clients[provider];
  }

  callbackUrl(provider: ProviderName): string {
    return `${this.deps.callbackBase}/${provider}/callback`;
  }

  /** The credentials in force, or a clear refusal when the provider is not set up or is disabled. */
  async settings(provider: ProviderName, db: Executor = this.deps.db): Promise<ProviderSettings> {
    const row = await findProviderWithSecretPrivileged(db, provider);
    if (row) {
      if (!row.isEnabled) throw ExternalAuthErrors.notConfigured(PROVIDER_LABEL[provider]);
      let clientSecret: string;
      try {
        clientSecret = this.deps.box.decryptString(row.clientSecretSealed, secretContext(provider));
      } catch {
        // Sealed under a master key that is no longer configured.
        throw ExternalAuthErrors.unreadableSecret(PROVIDER_LABEL[provider]);
      }
      return { provider, clientId: row.clientId, clientSecret, scopes: row.scopes.length > 0 ? row.scopes : this.deps.env[provider].scopes };
    }
    const env = this.deps.env[provider];
    if (!env.clientId || !env.clientSecret) throw ExternalAuthErrors.notConfigured(PROVIDER_LABEL[provider]);
    return { provider, clientId: env.clientId, clientSecret: env.clientSecret, scopes: env.scopes };
  }

  async listPublic(): Promise<PublicProviderView[]> {
    const views = await this.listViews();
    return views.map((v) => ({
      id: v.provider,
      name: v.name,
      type: v.provider === "google" ? "oidc" : "oauth2",
      isConfigured: v.source !== "none",
      isActive: v.source !== "none" && v.isEnabled,
      settings: { requiresDomain: false, supportsRefreshTokens: false },
    }));
  }

  async list(ctx: RequestContext): Promise<ProviderConfigView[]> {
    requireSuperadmin(ctx);
    return this.listViews();
  }

  async get(ctx: RequestContext, provider: unknown): Promise<ProviderConfigView> {
    requireSuperadmin(ctx);
    const name = this.parseProvider(provider);
    return this.view(name, await oauthProvidersRepository.find(this.deps.db, name));
  }

  /** Creates or replaces the stored configuration; `created` tells a new one from an update. */
  async configure(ctx: RequestContext, provider: unknown, input: ProviderConfigInput): Promise<{ config: ProviderConfigView; created: boolean }> {
    const actor = requireSuperadmin(ctx);
    const name = this.parseProvider(provider);
    const data = parseInput(providerConfigSchema, input);
    // Google is an OpenID Connect provider: without openid there is no ID token to verify.
    if (name === "google" && data.scopes && !data.scopes.includes("openid")) {
      throw CommonErrors.validation([{ path: "scopes", message: "must include openid for Google" }]);
    }
    const { db, clock, box, audit } = this.deps;
    return db.transaction(async (tx) => {
      const existing = await oauthProvidersRepository.find(tx, name, true);
      const now = clock.now();
      const values = {
        clientId: data.clientId,
        scopes: data.scopes ?? existing?.scopes ?? [],
        isEnabled: data.isEnabled ?? existing?.isEnabled ?? true,
        updatedBy: actor.userId,
        updatedAt: now,
      };
      // Without a new secret an update keeps the stored one, and a first configuration is refused.
      const clientSecretSealed = data.clientSecret ? box.encrypt(data.clientSecret, secretContext(name)) : undefined;
      let row: ProviderConfigRow;
      if (existing) row = await oauthProvidersRepository.update(tx, name, clientSecretSealed ? { ...values, clientSecretSealed } : values);
      else if (clientSecretSealed) row = await oauthProvidersRepository.insert(tx, name, { ...values, clientSecretSealed }, now);
      else throw ExternalAuthErrors.secretRequired();
      await audit.record(tx, ctx, existing ? AuditAction.externalConfigUpdated : AuditAction.externalConfigCreated, {
        resourceType: "oauth_provider",
        resourceId: name,
        metadata: { client_id: data.clientId, scopes: values.scopes, is_enabled: values.isEnabled, secret_changed: Boolean(data.clientSecret) },
      });
      return { config: this.view(name, row), created: !existing };
    });
  }

  /** Removes the stored configuration: the environment's, if any, applies again. */
  async remove(ctx: RequestContext, provider: unknown): Promise<void> {
    requireSuperadmin(ctx);
    const name = this.parseProvider(provider);
    await this.deps.db.transaction(async (tx) => {
      if (!(await oauthProvidersRepository.delete(tx, name))) throw ExternalAuthErrors.notConfigured(PROVIDER_LABEL[name]);
      await this.deps.audit.record(tx, ctx, AuditAction.externalConfigDeleted, { resourceType: "oauth_provider", resourceId: name });
    });
  }

  private async listViews(): Promise<ProviderConfigView[]> {
    const rows = await oauthProvidersRepository.list(this.deps.db);
    return PROVIDERS.map((p) => this.view(p, rows.find((r) => r.provider === p)));
  }

  private view(provider: ProviderName, row: ProviderConfigRow | undefined): ProviderConfigView {
    const env = this.deps.env[provider];
    const fromEnv = Boolean(env.clientId && env.clientSecret);
    return {
      provider,
      name: PROVIDER_LABEL[provider],
      source: row ? "database" : fromEnv ? "environment" : "none",
      clientId: row?.clientId ?? env.clientId ?? null,
      scopes: row && row.scopes.length > 0 ? row.scopes : env.scopes,
      isEnabled: row ? row.isEnabled : fromEnv,
      hasClientSecret: row ? true : Boolean(env.clientSecret),
      callbackUrl: this.callbackUrl(provider),
      updatedAt: row?.updatedAt ?? null,
    };
  }
}
