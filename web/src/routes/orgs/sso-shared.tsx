import { ApiError, type FieldError } from "../../api";
import { graphql, type ResultOf } from "../../graphql";

/**
 * What the single sign-on screen's parts share (sso.tsx, sso-oidc.tsx, sso-saml.tsx,
 * sso-connection.tsx): the connections' query, roles, and the access settings every connection has
 * (the role of a new member, group mappings, requiring single sign-on, the session limit).
 */
export const SsoQuery = graphql(`
  query OrganizationSso($orgId: ID!) {
    ssoConnections(orgId: $orgId) {
      id kind name issuer clientId hasSecret enabled requireSso defaultRole scopes emailClaim nameClaim groupsClaim
      groupMappings { group role departmentIds }
      sessionMaxAgeSeconds redirectUri backchannelLogoutUri startUrl createdAt updatedAt
      saml {
        spEntityId spMetadataUrl acsUrl sloUrl idpEntityId idpSsoUrl idpSloUrl idpMetadataUrl metadataFetchedAt idpCertificateCount
        idpCertificates { fingerprintSha256 subjectCn notBefore notAfter inRolloverOverlap overlapEndsAt }
        allowIdpInitiated signAuthnRequests preferPostBinding authnRequestBinding wantEncryptedAssertions spSigningCertificate spEncryptionCertificate emailAttribute nameAttribute groupsAttribute
      }
    }
    departments(orgId: $orgId) { id name }
    organizationDomains(orgId: $orgId) { id domain status }
  }
`);
export const UpdateConnection = graphql(`
  mutation UpdateSsoConnection($orgId: ID!, $connectionId: ID!, $input: UpdateSsoConnectionInput!) {
    updateSsoConnection(orgId: $orgId, connectionId: $connectionId, input: $input) { id name enabled requireSso }
  }
`);

type Data = ResultOf<typeof SsoQuery>;
export type Connection = Data["ssoConnections"][number];
export type Department = Data["departments"][number];

export const ROLES = [
  { value: "admin", label: "Admin" },
  { value: "member", label: "Member" },
  { value: "guest", label: "Guest" },
];
export const roleLabel = (r: string | null | undefined) => ROLES.find((x) => x.value === r)?.label ?? "no change";

export interface MappingRow {
  key: number;
  group: string;
  role: string;
  departmentIds: string[];
}
/** The settings of a connection that decide who gets in as what, whatever its protocol. */
export interface AccessDraft {
  name: string;
  defaultRole: string;
  mappings: MappingRow[];
  requireSso: boolean;
  sessionHours: string;
}
let rowKeys = 0;
export const nextRowKey = () => ++rowKeys;
export const blankAccess = (): AccessDraft => ({ name: "", defaultRole: "member", mappings: [], requireSso: false, sessionHours: "" });
export const accessDraftOf = (c: Connection): AccessDraft => ({
  name: c.name,
  defaultRole: c.defaultRole,
  mappings: c.groupMappings.map((m) => ({ key: nextRowKey(), group: m.group, role: m.role ?? "", departmentIds: m.departmentIds ?? [] })),
  requireSso: c.requireSso,
  sessionHours: String(Math.round((c.sessionMaxAgeSeconds / 3600) * 100) / 100),
});
const hours = (text: string): number | undefined => {
  const n = Number(text.trim());
  return text.trim() && Number.isFinite(n) ? Math.round(n * 3600) : undefined;
};
/** What create and update send for the access settings. */
export function accessInput(d: AccessDraft) {
  const seconds = hours(d.sessionHours);
  return {
    defaultRole: d.defaultRole,
    groupMappings: d.mappings.filter((m) => m.group.trim() || m.role || m.departmentIds.length).map((m) => ({ group: m.group.trim(), role: m.role || null, departmentIds: m.departmentIds })),
    requireSso: d.requireSso,
    ...(seconds !== undefined ? { sessionMaxAgeSeconds: seconds } : {}),
  };
}
/** "8 hours", "30 days". */
export function duration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} ${seconds === 86_400 ? "day" : "days"}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} ${seconds === 3600 ? "hour" : "hours"}`;
  return `${Math.round(seconds / 60)} minutes`;
}

const INDEXED: Record<string, string> = { groupMappings: "Group mapping", idpCertificates: "Certificate" };
/**
 * The API's validation messages by field: "groupMappings.1.group" becomes "Group mapping 2: …" at
 * the mappings; an error code about one field (an issuer's discovery, a metadata document) goes to
 * that field, as `byCode` says.
 */
export function errorsByField(error: unknown, byCode: Record<string, string> = {}): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const at = byCode[error.code];
  if (at) return { [at]: error.message };
  const out: Record<string, string> = {};
  for (const e of (error.details?.errors as FieldError[] | undefined) ?? []) {
    const [top, index] = e.path.split(".");
    if (!top) continue;
    const label = INDEXED[top];
    out[top] ??= label && index !== undefined && /^\d+$/.test(index) ? `${label} ${Number(index) + 1}: ${e.message}` : e.message;
  }
  return out;
}

export interface MutationLike {
  mutateAsync: () => Promise<unknown>;
  isPending: boolean;
  error: unknown;
  reset: () => void;
}

/** A connection's group mappings in words: "engineering → Member, Engineering". */
export function MappingList({ connection: c, departments }: { connection: Connection; departments: Department[] }) {
  const deptName = (id: string) => departments.find((d) => d.id === id)?.name ?? "a removed department";
  if (c.groupMappings.length === 0) return <>None</>;
  return (
    <ul>
      {c.groupMappings.map((m) => (
        <li key={m.group}>
          <code>{m.group}</code> → {m.role ? roleLabel(m.role) : "no role"}
          {m.departmentIds && m.departmentIds.length > 0 ? `, ${m.departmentIds.map(deptName).join(", ")}` : ""}
        </li>
      ))}
    </ul>
  );
}

