import { z } from "zod";
import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { API_SCOPE_NAMES } from "../../lib/api-scopes.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { changingClient } from "./client-cache.js";
import { ClientErrors } from "./oidc-clients.errors.js";
import { oidcClientsRepository } from "./oidc-clients.repository.js";
import { isClientId, view, type ClientView } from "./oidc-clients.service.js";
import { requireSuperadmin } from "../access/index.js";

/** What only an operator decides: which Keyward API scopes a client may ask for, and the built-in clients' lifetimes. */
export const configureClientSchema = z
  .object({
    allowedApiScopes: z.array(z.enum(API_SCOPE_NAMES as [string, ...string[]])).max(API_SCOPE_NAMES.length).optional(),
    name: z.string().trim().min(1).max(255).optional(),
    accessTokenTtl: z.number().int().min(60).max(86_400).optional(),
    idTokenTtl: z.number().int().min(60).max(86_400).optional(),
    refreshTokenTtl: z.number().int().min(300).max(31_536_000).optional(),
  })
  .refine((v) => Object.keys(v).length > 0, "nothing to update");
export type ConfigureClientInput = z.input<typeof configureClientSchema>;

/**
 * Superadmin view of every client: the built-in ones (which no organization owns, so no org admin
 * can change or delete them) and the delegation each client may request on Keyward's own API.
 */
export class OidcClientAdminService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  /** Keyward's built-in clients. */
  async listBuiltIn(ctx: RequestContext): Promise<ClientView[]> {
    requireSuperadmin(ctx);
    return (await oidcClientsRepository.listBuiltIn(this.db)).map(view);
  }

  async get(ctx: RequestContext, clientId: string): Promise<ClientView> {
    requireSuperadmin(ctx);
    return view(await this.find(this.db, clientId));
  }

  /** Narrowing the allowed scopes takes effect on tokens already issued (they are checked on every use). */
  async configure(ctx: RequestContext, clientId: string, input: ConfigureClientInput): Promise<ClientView> {
    requireSuperadmin(ctx);
    const data = parseInput(configureClientSchema, input);
    return changingClient(clientId, () => this.db.transaction(async (tx) => {
      const current = await this.find(tx, clientId);
      const allowedApiScopes = data.allowedApiScopes ? [...new Set(data.allowedApiScopes)].sort() : undefined;
      const row = await oidcClientsRepository.update(tx, current.id, { ...data, ...(allowedApiScopes ? { allowedApiScopes } : {}), updatedAt: this.clock.now() });
      await this.audit.record(tx, ctx, AuditAction.oidcClientConfigured, {
        organizationId: current.organizationId ?? undefined,
        resourceType: "oidc_client",
        resourceId: current.clientId,
        metadata: { fields: Object.keys(data), ...(allowedApiScopes ? { allowed_api_scopes: allowedApiScopes, previous_api_scopes: current.allowedApiScopes } : {}) },
      });
      return view(row);
    }));
  }

  private async find(db: Executor, clientId: string) {
    if (!isClientId(clientId)) throw ClientErrors.notFound();
    const row = await oidcClientsRepository.find(db, clientId);
    if (!row) throw ClientErrors.notFound();
    return row;
  }
}
