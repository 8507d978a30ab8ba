import { useQuery } from "@tanstack/react-query";
import { AuditDetails } from "../../ui/AuditDetails";
import { Link } from "@tanstack/react-router";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Time } from "../../ui/Time";

/**
 * One audit record as the operators' listings read it (each query names these fields:
 * id createdAt action actorId userId organizationId resourceType resourceId success ipAddress
 * userAgent requestId metadata).
 */
export interface Entry {
  id: string;
  createdAt: string;
  action: string;
  actorId: string | null;
  userId: string | null;
  organizationId: string | null;
  resourceType: string | null;
  resourceId: string | null;
  success: boolean;
  ipAddress: string | null;
  userAgent: string | null;
  requestId: string | null;
  metadata: Record<string, unknown>;
}

const LookupQuery = graphql(`
  query AdminLookup($userIds: [ID!], $organizationIds: [ID!]) {
    adminLookup(userIds: $userIds, organizationIds: $organizationIds) { users { id email fullName deleted } organizations { id name slug } }
  }
`);

/** The events of the system log, by area, in words (the API filters on the exact name). */
export const EVENTS: Array<[string, Array<[string, string]>]> = [
  [
    "Accounts",
    [
      ["user.register", "Account registered"],
      ["user.email_verified", "Address verified"],
      ["user.update", "Profile changed"],
      ["user.password_change", "Password changed"],
      ["user.password_reset", "Password reset"],
      ["user.email_change.completed", "Address changed"],
      ["user.delete", "Account deleted"],
      ["user.restore", "Account restored"],
      ["user.suspend", "Account suspended"],
      ["user.unsuspend", "Suspension lifted"],
    ],
  ],
  [
    "Sign-in",
    [
      ["user.login", "Signed in"],
      ["user.login.failed", "Sign-in refused"],
      ["user.login.mfa_required", "Second step asked for"],
      ["user.logout", "Signed out"],
      ["user.cli_login", "Signed in from the command line"],
      ["external_auth.login", "Signed in with GitHub or Google"],
      ["external_auth.login.failed", "GitHub or Google sign-in refused"],
      ["external_auth.link.completed", "GitHub or Google linked"],
      ["external_auth.unlink", "GitHub or Google unlinked"],
      ["session.revoke", "Session ended"],
    ],
  ],
  [
    "Two-step verification",
    [
      ["totp.enroll.initiated", "Authenticator app set-up started"],
      ["totp.enroll.completed", "Authenticator app turned on"],
      ["totp.disabled", "Authenticator app turned off"],
      ["webauthn.register.completed", "Passkey added"],
      ["webauthn.credential.deleted", "Passkey removed"],
      ["mfa.verify.failed", "Second step refused"],
      ["totp.backup_code.used", "Backup code used"],
    ],
  ],
  [
    "Operators",
    [
      ["user.superadmin.granted", "Made superadmin"],
      ["user.superadmin.revoked", "Superadmin removed"],
      ["admin.password.set", "Password set by an administrator"],
      ["admin.mfa.remove", "Two-step removed by an administrator"],
      ["admin.email.verify", "Address marked verified by an operator"],
      ["admin.oauth.unlink", "Provider unlinked by an administrator"],
      ["external_auth.config.create", "Sign-in provider configured"],
      ["external_auth.config.update", "Sign-in provider changed"],
      ["external_auth.config.delete", "Sign-in provider configuration removed"],
      ["oidc.client.configured", "Client configured by an operator"],
      ["email.retried", "Email queued again"],
      ["keys.resealed", "Sealed values re-encrypted"],
    ],
  ],
  [
    "Organizations",
    [
      ["org.create", "Organization created"],
      ["org.update", "Organization changed"],
      ["org.delete", "Organization deleted"],
      ["org.ownership.transferred", "Ownership transferred"],
      ["org.member.add", "Member added"],
      ["org.member.remove", "Member removed"],
      ["org.member.offboarded", "Member offboarded"],
      ["org.member.reinstated", "Member reinstated"],
      ["org.member.role_change", "Role changed"],
      ["ORG_INVITE_SENT", "Invitation sent"],
      ["ORG_INVITE_ACCEPTED", "Invitation accepted"],
    ],
  ],
  [
    "SSH and applications",
    [
      ["ca.created", "Certificate authority created"],
      ["ca.key.rotated", "CA key rotated"],
      ["ssh.cert.issued", "Certificate issued"],
      ["ssh.cert.revoked", "Certificate revoked"],
      ["ssh.key.added", "SSH key added"],
      ["ssh.key.verified", "SSH key proved"],
      ["api_key.created", "API key created"],
      ["oidc.client.created", "Application registered"],
      ["oidc.grant.success", "Signed in to an application"],
      ["oidc.refresh_token.reuse", "Refresh token reused"],
    ],
  ],
  [
    "Networks",
    [
      ["network.kill_switch.triggered", "Kill switch triggered"],
      ["network.kill_switch.lifted", "Kill switch lifted"],
      ["network.activation.started", "Network activation started"],
      ["network.activation.ended", "Network activation ended"],
      ["network.device.registered", "Device registered"],
      ["network.approval.requested", "Network access requested"],
      ["network.approval.approved", "Network access approved"],
    ],
  ],
  [
    "Audit chain",
    [
      ["audit.chain.verified", "Audit chain verified"],
      ["audit.chain.exported", "Audit chain exported"],
    ],
  ],
];
export const EVENT_WORDS = new Map(EVENTS.flatMap(([, list]) => list));

type Names = { person: (id: string) => { label: string; id: string; deleted: boolean } | null; org: (id: string) => string };

/** Names for the accounts and organizations a page of records mentions: one request, after the page. */
export function useNames(entries: Entry[], alsoUserIds: string[] = []): Names {
  const userIds = [...new Set([...alsoUserIds, ...entries.flatMap((e) => [e.actorId, e.userId])].filter((v): v is string => !!v))].sort();
  const organizationIds = [...new Set(entries.map((e) => e.organizationId).filter((v): v is string => !!v))].sort();
  const q = useQuery({
    queryKey: ["admin", "lookup", userIds, organizationIds],
    queryFn: () => gql(LookupQuery, { userIds, organizationIds }),
    enabled: userIds.length + organizationIds.length > 0,
    staleTime: 60_000,
  });
  const people = new Map((q.data?.adminLookup.users ?? []).map((u) => [u.id, u]));
  const orgs = new Map((q.data?.adminLookup.organizations ?? []).map((o) => [o.id, o.name]));
  return {
    person: (id) => {
      const p = people.get(id);
      if (!p) return q.isPending ? { label: "…", id, deleted: false } : null;
      return { label: p.fullName ? `${p.fullName} (${p.email})` : p.email, id, deleted: p.deleted };
    },
    org: (id) => orgs.get(id) ?? (q.isPending ? "…" : `a deleted organization (${id.slice(0, 8)})`),
  };
}

function Person({ id, names }: { id: string; names: Names }) {
  const p = names.person(id);
  if (!p) return <span>a removed account ({id.slice(0, 8)})</span>;
  if (p.deleted) return <span>{p.label} (deleted)</span>;
  return (
    <Link to="/admin/accounts/$userId" params={{ userId: id }}>
      {p.label}
    </Link>
  );
}

/** One record of the log: what happened, by whom, about whom, where; its details fold open. */
export function AuditItem({ entry: e, names }: { entry: Entry; names: Names }) {
  const words = EVENT_WORDS.get(e.action);
  const metadata = Object.keys(e.metadata).length > 0 ? JSON.stringify(e.metadata, null, 2) : null;
  return (
    <li>
      <div className="activity-line">
        <strong>{words ?? e.action}</strong>
        {words && <code className="muted">{e.action}</code>}
        {!e.success && <Badge tone="bad">Failed</Badge>}
        <span className="activity-when">
          <Time iso={e.createdAt} mode="full" />
        </span>
      </div>
      <div className="muted">
        by {e.actorId ? <Person id={e.actorId} names={names} /> : "Keyward"}
        {e.userId && e.userId !== e.actorId && (
          <>
            {" "}
            · about <Person id={e.userId} names={names} />
          </>
        )}
        {e.organizationId && <> · in {names.org(e.organizationId)}</>}
        {e.resourceType && (
          <>
            {" "}
            · {e.resourceType.replace(/_/g, " ")} <code>{e.resourceId}</code>
          </>
        )}
      </div>
      <AuditDetails e={e} metadata={metadata} />
    </li>
  );
}
