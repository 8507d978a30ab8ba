import { and, desc, eq, isNull } from "drizzle-orm";
import { apiKeys, organizations } from "../../../schema/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";
import { randomHex, randomToken, sha256Hex } from "../../lib/crypto/index.js";
import { AppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/audit.actions.js";
import type { AuditService } from "../audit/audit.service.js";
import { requireOrgAccess } from "../orgs/org-access.js";
import { createApiKeySchema as createSchema, revokeApiKeySchema as revokeSchema, updateApiKeySchema as updateSchema } from "./api-keys.schemas.js";

/** Recognisable by secret scanners; the part after the public id is the 256-bit secret. */
export const API_KEY_PREFIX = "kwk_";

export const ApiKeyErrors = {
  notFound: () => new AppError("API_KEY_NOT_FOUND", 404, "API key not found"),
  alreadyRevoked: () => new AppError("ALREADY_REVOKED", 409, "The API key is already revoked"),
};


const columns = {
  id: apiKeys.id,
  organizationId: apiKeys.organizationId,
  name: apiKeys.name,
  description: apiKeys.description,
  prefix: apiKeys.prefix,
  createdBy: apiKeys.createdBy,
  lastUsedAt: apiKeys.lastUsedAt,
  revokedAt: apiKeys.revokedAt,
  revokeReason: apiKeys.revokeReason,
  createdAt: apiKeys.createdAt,
  updatedAt: apiKeys.updatedAt,
};

export type ApiKeyView = {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  prefix: string;
  createdBy: string | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  revokeReason: string | null;
  createdAt: Date;
  updatedAt: Date;
};

/** Organization API keys for machines (the sudo check on servers, scripts). Secrets are shown once. */
export class ApiKeysService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async list(ctx: RequestContext, orgId: string): Promise<ApiKeyView[]> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "api_keys.manage");
    return this.db.select(columns).from(apiKeys).where(and(eq(apiKeys.organizationId, id), live(apiKeys))).orderBy(desc(apiKeys.createdAt));
  }

  /** Creates a key; the returned `key` is the only time the secret is ever seen. */
  async create(ctx: RequestContext, orgId: string, input: unknown): Promise<ApiKeyView & { key: string }> {
    const { orgId: id, actor } = await requireOrgAccess(this.db, ctx, orgId, "api_keys.manage");
    const data = parseInput(createSchema, input);
    const prefix = `${API_KEY_PREFIX}${randomHex(6)}`;
    const key = `${prefix}_${randomToken(32)}`;
    return this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const [row] = await tx
        .insert(apiKeys)
        .values({ organizationId: id, name: data.name, description: data.description, prefix, keyHash: sha256Hex(key), createdBy: actor.userId, createdAt: now, updatedAt: now })
        .returning(columns);
      await this.audit.record(tx, ctx, AuditAction.apiKeyCreate, { organizationId: id, resourceType: "api_key", resourceId: row!.id, metadata: { name: data.name, prefix } });
      return { ...row!, key };
    });
  }

  async update(ctx: RequestContext, orgId: string, keyId: string, input: unknown): Promise<ApiKeyView> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "api_keys.manage");
    const kid = parseId(keyId, ApiKeyErrors.notFound);
    const data = parseInput(updateSchema, input);
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .update(apiKeys)
        .set({ ...data, updatedAt: this.clock.now() })
        .where(and(eq(apiKeys.id, kid), eq(apiKeys.organizationId, id), live(apiKeys)))
        .returning(columns);
      if (!row) throw ApiKeyErrors.notFound();
      await this.audit.record(tx, ctx, AuditAction.apiKeyUpdate, { organizationId: id, resourceType: "api_key", resourceId: kid, metadata: { fields: Object.keys(data) } });
      return row;
    });
  }

  /** Revokes a key at once (it stays listed, marked revoked, for the record). */
  async revoke(ctx: RequestContext, orgId: string, keyId: string, input: unknown): Promise<ApiKeyView> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "api_keys.manage");
    const kid = parseId(keyId, ApiKeyErrors.notFound);
    const { reason } = parseInput(revokeSchema, input ?? {});
    return this.db.transaction(async (tx) => {
      const [current] = await tx.select(columns).from(apiKeys).where(and(eq(apiKeys.id, kid), eq(apiKeys.organizationId, id), live(apiKeys)));
      if (!current) throw ApiKeyErrors.notFound();
      if (current.revokedAt) throw ApiKeyErrors.alreadyRevoked();
      const now = this.clock.now();
      const [row] = await tx.update(apiKeys).set({ revokedAt: now, revokeReason: reason ?? null, updatedAt: now }).where(eq(apiKeys.id, kid)).returning(columns);
      await this.audit.record(tx, ctx, AuditAction.apiKeyRevoke, { organizationId: id, resourceType: "api_key", resourceId: kid, metadata: { reason } });
      return row!;
    });
  }

  /**
   * Privileged lookup for machine callers: the organization a presented key belongs to, when the
   * key is live and not revoked. Touches last_used_at.
   */
  async authenticate(db: Executor, presented: string): Promise<{ keyId: string; organizationId: string } | null> {
    if (!presented.startsWith(API_KEY_PREFIX) || presented.length > 200) return null;
    // A key dies with its organization: a deleted organization's servers get no answers.
    const [row] = await db
      .select({ id: apiKeys.id, organizationId: apiKeys.organizationId })
      .from(apiKeys)
      .innerJoin(organizations, and(eq(organizations.id, apiKeys.organizationId), live(organizations)))
      .where(and(eq(apiKeys.keyHash, sha256Hex(presented)), live(apiKeys), isNull(apiKeys.revokedAt)));
    if (!row) return null;
    await db.update(apiKeys).set({ lastUsedAt: this.clock.now() }).where(eq(apiKeys.id, row.id));
    return { keyId: row.id, organizationId: row.organizationId };
  }
}
