import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { type SecretBox, sealContexts } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { ControllerError, type ControllerClient, type ControllerConfig } from "./controller/index.js";
import { NetworkErrors } from "./networks.errors.js";
import { readControllerConnectionPrivileged } from "./controller.secrets.repository.js";
import { controllerRepository } from "./controller.repository.js";
import { controllerConfigSchema, type ControllerConfigInput } from "./networks.schemas.js";
import { requireOrgAccess, requireStoredRole } from "../access/index.js";

export interface ControllerSettings {
  /** ZeroTier Central's API; fixed in production, a local stand-in in tests. */
  centralUrl: string;
  /** Base-URL prefixes an organization may point a self-hosted controller at (the operator's list). */
  allowedControllerUrls: readonly string[];
}

export type ClientFactory = (config: ControllerConfig) => ControllerClient;

export interface ControllerConfigView {
  configured: boolean;
  ztApiMode: "controller" | "central" | null;
  ztApiUrl: string | null;
  controllerAddress: string | null;
  lastCheckedAt: Date | null;
  updatedAt: Date | null;
}

/** AAD for the sealed token: a ciphertext cannot be moved to another organization's row. */
const tokenContext = sealContexts.controllerToken;

/** Translates controller failures into the API's codes; anything else is a bug and goes up as is. */
export async function atController<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof ControllerError) throw NetworkErrors.controller(e);
    throw e;
  }
}

/**
 * Each organization's connection to its ZeroTier controller (self-hosted, or ZeroTier Central).
 * The token is sealed at rest and never returned; a configuration is saved only after it worked.
 */
export class ControllerConfigService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly box: SecretBox,
    private readonly makeClient: ClientFactory,
    private readonly settings: ControllerSettings,
  ) {}

  async get(ctx: RequestContext, orgId: string): Promise<ControllerConfigView> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "networks.manage");
    const row = await controllerRepository.controller(this.db, id);
    return {
      configured: !!row,
      ztApiMode: row?.mode ?? null,
      ztApiUrl: row?.baseUrl ?? null,
      controllerAddress: row?.controllerAddress ?? null,
      lastCheckedAt: row?.lastCheckedAt ?? null,
      updatedAt: row?.updatedAt ?? null,
    };
  }

  /** Tests the connection live; nothing is saved unless the controller answered with these credentials. */
  async put(ctx: RequestContext, orgId: string, input: ControllerConfigInput): Promise<ControllerConfigView> {
    const access = await requireOrgAccess(this.db, ctx, orgId, "networks.manage");
    // Which controller the organization's networks live on decides who is on them: not on a time-bounded role.
    requireStoredRole(access, "networks.manage", "change the network controller");
    const { orgId: id, actor } = access;
    const data = parseInput(controllerConfigSchema, input);
    const baseUrl = data.ztApiMode === "central" ? this.settings.centralUrl : this.selfHostedUrl(data.ztApiUrl);
    const status = await atController(() => this.makeClient({ mode: data.ztApiMode, baseUrl, token: data.ztApiToken }).test());
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      await controllerRepository.upsertController(tx, {
        organizationId: id,
        mode: data.ztApiMode,
        baseUrl,
        tokenSealed: this.box.encrypt(data.ztApiToken, tokenContext(id)),
        controllerAddress: status.address,
        lastCheckedAt: now,
        updatedBy: actor.userId,
        createdAt: now,
        updatedAt: now,
      });
      await this.audit.record(tx, ctx, AuditAction.networkControllerConfigured, {
        organizationId: id,
        resourceType: "network_controller",
        resourceId: id,
        metadata: { mode: data.ztApiMode, url: baseUrl, controller_address: status.address },
      });
    });
    return this.get(ctx, id);
  }

  async remove(ctx: RequestContext, orgId: string): Promise<void> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "networks.manage");
    await this.db.transaction(async (tx) => {
      if (!(await controllerRepository.deleteController(tx, id))) throw NetworkErrors.controllerNotConfigured();
      await this.audit.record(tx, ctx, AuditAction.networkControllerRemoved, { organizationId: id, resourceType: "network_controller", resourceId: id });
    });
  }

  /** The organization's controller client, or null when none is configured. Privileged: it unseals the token. */
  async clientFor(db: Executor, orgId: string): Promise<ControllerClient | null> {
    const row = await readControllerConnectionPrivileged(db, orgId);
    if (!row) return null;
    return this.makeClient({ mode: row.mode, baseUrl: row.baseUrl, token: this.box.decryptString(row.tokenSealed, tokenContext(orgId)) });
  }

  async requireClient(db: Executor, orgId: string): Promise<ControllerClient> {
    const client = await this.clientFor(db, orgId);
    if (!client) throw NetworkErrors.controllerNotConfigured();
    return client;
  }

  /**
   * A self-hosted controller's URL must be on the operator's list: an organization admin cannot
   * make Keyward send requests (with a token header) to arbitrary hosts on its network.
   */
  private selfHostedUrl(url: string | undefined): string {
    if (!url) throw NetworkErrors.controllerUrlRequired();
    if (!controllerUrlAllowed(url, this.settings.allowedControllerUrls)) throw NetworkErrors.controllerUrlNotAllowed();
    return url.replace(/\/+$/, "");
  }
}

/**
 * Whether `url` lies under one of the allowed base URLs: the same scheme, host and port, and the
 * same path or a path below it (`http://ctl:9993` allows `http://ctl:9993/zt`, not
 * `http://ctl:99931` nor `http://ctl:9993.evil.example`). Credentials in the URL are refused.
 */
export function controllerUrlAllowed(url: string, allowed: readonly string[]): boolean {
  const candidate = URL.parse(url);
  if (!candidate || candidate.username || candidate.password || candidate.search || candidate.hash) return false;
  const path = candidate.pathname.replace(/\/+$/, "");
  return allowed.some((entry) => {
    const base = URL.parse(entry);
    if (!base || base.origin !== candidate.origin) return false;
    const basePath = base.pathname.replace(/\/+$/, "");
    return path === basePath || path.startsWith(`${basePath}/`);
  });
}
