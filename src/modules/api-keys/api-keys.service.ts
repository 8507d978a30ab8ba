import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { randomHex, randomToken, sha256Hex } from "../../lib/crypto/index.js";
import { AppError } from "../../lib/errors.js";
import { API_KEY_PREFIX, isApiKeyScope } from "../../lib/api-key-scopes.js";
import type { ApiKeyActor, RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { apiKeysPrivilegedRepository } from "./api-key-lookup.repository.js";
import { apiKeysRepository, type ApiKeyRow } from "./api-keys.repository.js";
import { createApiKeySchema as createSchema, revokeApiKeySchema as revokeSchema, updateApiKeySchema as updateSchema, type CreateApiKeyInput, type UpdateApiKeyInput, type RevokeApiKeyInput } from "./api-keys.schemas.js";
import { requireOrgAccess } from "../access/index.js";

// Recognisable by secret scanners; the part after the public id is the 256-bit secret.
export { API_KEY_PREFIX };

export const ApiKeyErrors = {
  notFound: () => new AppError("API_KEY_NOT_FOUND", 404, "API key not found"),
  alreadyRevoked: () => new AppError("ALREADY_REVOKED", 409, "The API key is already revoked"),
};

export type ApiKeyView = ApiKeyRow;

/** Who a presented API key speaks for: one organization, through one key, within its scopes. */
export type ApiKeyCaller = Omit<ApiKeyActor, "kind">;

/** Organization API keys for machines (the sudo check on servers, scripts). Secrets are shown once. */
export class ApiKeysService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async list(ctx: RequestContext, orgId: string): Promise<ApiKeyView[]> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "api_keys.manage");
    return apiKeysRepository.listForOrganization(this.db, id);
  }

  /** Creates a key; the returned `key` is the only time the secret is ever seen. */
  async create(ctx: RequestContext, orgId: string, input: CreateApiKeyInput): Promise<ApiKeyView & { key: string }> {
    const { orgId: id, actor } = await requireOrgAccess(this.db, ctx, orgId, "api_keys.manage");
    const data = parseInput(createSchema, input);
    const prefix = `${API_KEY_PREFIX}${randomHex(6)}`;
    const key = `${prefix}_${randomToken(32)}`;
    return this.db.transaction(async (tx) => {
      const row = await apiKeysRepository.insert(tx, { organizationId: id, ...data, prefix, keyHash: sha256Hex(key), createdBy: actor.userId, now: this.clock.now() });
      await this.audit.record(tx, ctx, AuditAction.apiKeyCreate, { organizationId: id, resourceType: "api_key", resourceId: row.id, metadata: { name: data.name, prefix, scopes: data.scopes } });
      return { ...row, key };
    });
  }

  async update(ctx: RequestContext, orgId: string, keyId: string, input: UpdateApiKeyInput): Promise<ApiKeyView> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "api_keys.manage");
    const kid = parseId(keyId, ApiKeyErrors.notFound);
    const data = parseInput(updateSchema, input);
    return this.db.transaction(async (tx) => {
      const row = await apiKeysRepository.update(tx, id, kid, { ...data, updatedAt: this.clock.now() });
      if (!row) throw ApiKeyErrors.notFound();
      await this.audit.record(tx, ctx, AuditAction.apiKeyUpdate, { organizationId: id, resourceType: "api_key", resourceId: kid, metadata: { fields: Object.keys(data), ...(data.scopes ? { scopes: data.scopes } : {}) } });
      return row;
    });
  }

  /** Revokes a key at once (it stays listed, marked revoked, for the record). */
  async revoke(ctx: RequestContext, orgId: string, keyId: string, input: RevokeApiKeyInput): Promise<ApiKeyView> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "api_keys.manage");
    const kid = parseId(keyId, ApiKeyErrors.notFound);
    const { reason } = parseInput(revokeSchema, input ?? {});
    return this.db.transaction(async (tx) => {
      const current = await apiKeysRepository.find(tx, id, kid);
      if (!current) throw ApiKeyErrors.notFound();
      if (current.revokedAt) throw ApiKeyErrors.alreadyRevoked();
      const row = await apiKeysRepository.revoke(tx, kid, reason ?? null, this.clock.now());
      await this.audit.record(tx, ctx, AuditAction.apiKeyRevoke, { organizationId: id, resourceType: "api_key", resourceId: kid, metadata: { reason } });
      return row;
    });
  }

  /**
   * Offboarding, in the caller's transaction: the keys the person created in this organization stop
   * working (they held the secrets). Each revocation is audited; answers the keys' ids.
   */
  async revokeCreatedBy(tx: Executor, ctx: RequestContext, orgId: string, userId: string, reason: string): Promise<string[]> {
    const ids = await apiKeysRepository.revokeCreatedBy(tx, orgId, userId, reason, this.clock.now());
    for (const kid of ids) await this.audit.record(tx, ctx, AuditAction.apiKeyRevoke, { organizationId: orgId, resourceType: "api_key", resourceId: kid, metadata: { reason } });
    return ids;
  }

  /**
   * Machine callers: the organization, key and scopes a presented secret speaks for, when the key
   * is live and not revoked and its organization live; null otherwise. Touches last_used_at. The
   * hash never leaves this module.
   */
  async authenticate(presented: string): Promise<ApiKeyCaller | null> {
    const db = this.db;
    // Not shaped like a key (or absurdly long): no hashing, no query.
    if (!presented.startsWith(API_KEY_PREFIX) || presented.length > 200) return null;
    const row = await apiKeysPrivilegedRepository.findKeyByHashPrivileged(db, sha256Hex(presented));
    if (!row) return null;
    const used = await apiKeysRepository.touchLastUsed(db, row.id, this.clock.now());
    if (!used) return null;
    // A scope this version no longer knows grants nothing (rather than failing the caller).
    return { keyId: row.id, organizationId: row.organizationId, prefix: used.prefix, scopes: new Set(used.scopes.filter(isApiKeyScope)) };
  }
}
