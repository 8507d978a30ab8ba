import type { ConnectionRow } from "./sso-connections.repository.js";
import type { SsoRole } from "./sso.schemas.js";

const RANK: Record<SsoRole, number> = { admin: 2, member: 1, guest: 0 };
const asRole = (r: string): SsoRole => (r === "admin" || r === "guest" ? r : "member");

/**
 * What the provider's groups grant: the highest role any matching mapping names (the connection's
 * default when none names one), and every department the matching mappings name (granted by this
 * connection: departments it granted before and grants no more are taken away). Roles stop at
 * admin by type and by the schema's check: a group can never make an owner.
 */
export function grantFor(connection: Pick<ConnectionRow, "id" | "defaultRole" | "groupMappings">, groups: string[]): { role: SsoRole; departmentIds: string[]; connectionId: string } {
  const held = new Set(groups);
  const matched = connection.groupMappings.filter((m) => held.has(m.group));
  const roles = matched.flatMap((m) => (m.role ? [asRole(m.role)] : []));
  const role = roles.length ? roles.reduce((a, b) => (RANK[b] > RANK[a] ? b : a)) : asRole(connection.defaultRole);
  return {
    role,
    departmentIds: [...new Set(matched.flatMap((m) => m.departmentIds ?? []))],
    connectionId: connection.id,
  };
}
