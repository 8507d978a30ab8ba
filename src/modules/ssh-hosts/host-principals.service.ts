import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { requireOrgAccess, requireStoredRole } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { hostPrincipalsRepository, type HostPrincipalMapRow } from "./host-principals.repository.js";
import { HostErrors } from "./ssh-hosts.errors.js";
import { setHostPrincipalsSchema, type SetHostPrincipalsInput } from "./ssh-hosts.schemas.js";

/** Mappings per organization: enough for every host group, bounded so a host's answer stays small. */
export const MAX_HOST_PRINCIPAL_MAPS = 500;

/** What one host writes: for each local account, the principals that may log in as it (sorted, unique). */
export interface AuthorizedPrincipals {
  login: string;
  principals: string[];
}

/** OpenSSH-style pattern match (`*` any run, `?` one character), case-insensitive, whole name. */
export function matchesHostPattern(pattern: string, name: string): boolean {
  const re = new RegExp(`^${pattern.toLowerCase().replace(/[.+^${}()|[\]\\-]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`);
  return re.test(name.toLowerCase());
}

/** The mappings that apply to a host (a pattern matching any of its names), merged per login. */
export function principalsForHost(rows: HostPrincipalMapRow[], names: string[]): AuthorizedPrincipals[] {
  const byLogin = new Map<string, Set<string>>();
  for (const row of rows) {
    if (!names.some((n) => matchesHostPattern(row.hostPattern, n))) continue;
    const set = byLogin.get(row.login) ?? new Set<string>();
    row.principals.forEach((p) => set.add(p));
    byLogin.set(row.login, set);
  }
  return [...byLogin.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([login, set]) => ({ login, principals: [...set].sort() }));
}

/** The principals one host's sshd accepts per login (read when the host enrolls or renews). */
export async function authorizedPrincipalsOf(db: Executor, organizationId: string, names: string[]): Promise<AuthorizedPrincipals[]> {
  return principalsForHost(await hostPrincipalsRepository.list(db, organizationId, MAX_HOST_PRINCIPAL_MAPS), names);
}

/**
 * Per-host AuthorizedPrincipalsFile: an admin says which certificate principals may log in as which
 * local account on the hosts a pattern matches. Hosts pick it up at their next enroll or renew
 * (`keyward host renew` refreshes it every run, hourly with the timer).
 */
export class HostPrincipalsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async list(ctx: RequestContext, orgId: string): Promise<HostPrincipalMapRow[]> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    return hostPrincipalsRepository.list(this.db, id, MAX_HOST_PRINCIPAL_MAPS);
  }

  /** Sets the principals of (host pattern, login): created, or replaced whole. */
  async set(ctx: RequestContext, orgId: string, input: SetHostPrincipalsInput): Promise<HostPrincipalMapRow> {
    const access = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    // Who may log in as whom on the servers, for good: never on a role held through a time-bounded
    // grant (a 2-hour admin would map root to a principal they hold for ever).
    requireStoredRole(access, "ca.manage", "map principals to server logins");
    const { orgId: id, actor } = access;
    const data = parseInput(setHostPrincipalsSchema, input);
    const hostPattern = data.hostPattern.toLowerCase();
    const principals = [...new Set(data.principals)].sort();
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const previous = await hostPrincipalsRepository.find(tx, id, hostPattern, data.login);
      // Bounded: every enroll and renew of the organization's hosts reads them all.
      if (!previous && (await hostPrincipalsRepository.list(tx, id, MAX_HOST_PRINCIPAL_MAPS)).length >= MAX_HOST_PRINCIPAL_MAPS) throw HostErrors.tooManyPrincipalMaps(MAX_HOST_PRINCIPAL_MAPS);
      const row = await hostPrincipalsRepository.upsert(tx, { organizationId: id, hostPattern, login: data.login, principals, by: actor.userId, now });
      await this.audit.record(tx, ctx, AuditAction.hostPrincipalsSet, {
        organizationId: id,
        resourceType: "host_principal_map",
        resourceId: row.id,
        metadata: { host_pattern: hostPattern, login: data.login, principals, previous: previous?.principals ?? null },
      });
      return row;
    });
  }

  async remove(ctx: RequestContext, orgId: string, mapId: string): Promise<HostPrincipalMapRow> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const mid = parseId(mapId, HostErrors.principalMapNotFound);
    return this.db.transaction(async (tx) => {
      const row = await hostPrincipalsRepository.remove(tx, id, mid);
      if (!row) throw HostErrors.principalMapNotFound();
      await this.audit.record(tx, ctx, AuditAction.hostPrincipalsRemoved, {
        organizationId: id,
        resourceType: "host_principal_map",
        resourceId: row.id,
        metadata: { host_pattern: row.hostPattern, login: row.login, principals: row.principals },
      });
      return row;
    });
  }
}
