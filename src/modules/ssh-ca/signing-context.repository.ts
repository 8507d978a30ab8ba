import { and, eq, sql } from "drizzle-orm";
import { activeMemberships, caKeys, certificateAuthorities, mfaCompliance, sshKeys } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { preparedQuery } from "../../infra/prepared.js";
import { live } from "../../infra/soft-delete.js";
import { sshKeyColumns, type SshKeyRow } from "../ssh-keys/index.js";
import { caColumns, caKeyColumns, type CaKeyRow, type CaRow } from "./ca.repository.js";
import type { StoredPolicy } from "./policy.js";
import { effectiveRoleSql, membershipColumns, type ActiveMembership, isAdminRole, ROLES } from "../access/index.js";

/** One of the caller's organizations as the signing pipeline sees it. */
export interface SigningOrganization {
  membership: ActiveMembership;
  pastMfaDeadline: boolean;
  /** The organization's live user CA and its active key, when it has them. */
  ca: CaRow | undefined;
  caKey: CaKeyRow | undefined;
  /** The caller's departments' stored policies there (null: a department without one). */
  policies: Array<StoredPolicy | null>;
  /** The principals the caller may put in a certificate there (admins: all of the organization's). */
  principals: string[];
  /**
   * Whether the caller has an approved grant there whose window holds the signing time: when not,
   * no grant can be in force and signing skips the grants read (ActiveGrantsPort, which decides).
   */
  grantsMayApply: boolean;
}

export interface UserSigningContext {
  /** A serial from the one sequence, taken with the reads (unused on failure: a gap). */
  serial: bigint;
  /** The named key when the caller owns it (live), or without a name their newest verified key. */
  key: SshKeyRow | undefined;
  /** The caller's active memberships (only the named organization's, when one is named), by organization name. */
  organizations: SigningOrganization[];
}

const ADMIN_ROLES = ROLES.filter(isAdminRole);
const P = { userId: sql.placeholder("userId"), orgId: sql.placeholder("orgId"), keyId: sql.placeholder("keyId"), at: sql.placeholder("at") };
const ADMIN_IN = sql.raw(ADMIN_ROLES.map((r) => `'${r}'`).join(", "));
/** The caller's effective role there at the signing time (stored role or a role grant in force). */
const effectiveRole = effectiveRoleSql(activeMemberships.membershipId, activeMemberships.role, P.at);

/**
 * Everything a user certificate needs before it is signed, in one prepared statement: the serial,
 * the key, and per organization the membership, the MFA standing, the user CA with its active
 * key, the department policies and the allowed principals. Each part is the query the pipeline
 * ran on its own before (one round trip each); the service applies the same guards, in the same
 * order, to what this returns. The policies and principals are read only where a CA exists (an
 * organization without one cannot be signed in; its row then has none).
 */
const readContext = preparedQuery("ssh_user_signing_context", (db) =>
  db
    .select({
      serial: sql<string>`base.serial::text`,
      key: sshKeyColumns,
      membership: membershipColumns(P.at),
      standing: mfaCompliance.status,
      ca: caColumns,
      caKey: caKeyColumns,
      policies: sql<unknown>`pol.policies`,
      principals: sql<unknown>`pr.names`,
      // A superset of the grants in force (the access-requests module's read adds the principal's,
      // department's and membership's conditions): false means there is none.
      grantsMayApply: sql<boolean>`exists(select 1 from access_requests ar where ar.user_id = ${P.userId}::uuid
        and ar.organization_id = ${activeMemberships.organizationId} and ar.state = 'approved'
        and ar.grant_starts_at <= ${P.at}::timestamptz and ar.grant_ends_at > ${P.at}::timestamptz)`,
    })
    // One row even without a key or a membership: the serial's.
    .from(sql`(select nextval('ssh_cert_serial_seq') as serial) as base`)
    .leftJoin(
      sshKeys,
      eq(
        sshKeys.id,
        sql`(select k.id from ssh_keys k where k.user_id = ${P.userId}::uuid and k.deleted_at is null
              and case when ${P.keyId}::uuid is null then k.verified_at is not null else k.id = ${P.keyId}::uuid end
              order by k.created_at desc limit 1)`,
      ),
    )
    .leftJoin(activeMemberships, and(sql`${activeMemberships.userId} = ${P.userId}::uuid`, sql`(${P.orgId}::uuid is null or ${activeMemberships.organizationId} = ${P.orgId}::uuid)`))
    .leftJoin(mfaCompliance, and(eq(mfaCompliance.userId, activeMemberships.userId), eq(mfaCompliance.organizationId, activeMemberships.organizationId)))
    .leftJoin(certificateAuthorities, and(eq(certificateAuthorities.organizationId, activeMemberships.organizationId), eq(certificateAuthorities.caType, "user"), live(certificateAuthorities)))
    .leftJoin(caKeys, and(eq(caKeys.caId, certificateAuthorities.id), eq(caKeys.isActive, true)))
    // The caller's departments there, each with its stored policy or null (directoryRepository.userDepartmentPolicies).
    .leftJoinLateral(
      sql`(select coalesce(json_agg(case when cp.department_id is null then null else json_build_object(
              'allowUserExpiry', cp.allow_user_expiry, 'defaultExpiryHours', cp.default_expiry_hours, 'maxExpiryHours', cp.max_expiry_hours,
              'allowedExtensions', cp.allowed_extensions, 'customExtensions', cp.custom_extensions,
              'requireHardwareKey', cp.require_hardware_key, 'requireTouch', cp.require_touch, 'requireVerify', cp.require_verify,
              'departmentName', d.name) end), '[]'::json) as policies
            from department_members dm
            join departments d on d.id = dm.department_id
            left join department_cert_policies cp on cp.department_id = d.id
            where ${certificateAuthorities.id} is not null
              and dm.user_id = ${P.userId}::uuid and d.organization_id = ${activeMemberships.organizationId} and d.deleted_at is null) as pol`,
      sql`true`,
    )
    // Admins: every live principal of the organization; members: their own and their departments'
    // (directoryRepository.listPrincipals, userDirectPrincipals, userDepartmentPrincipals).
    .leftJoinLateral(
      sql`(select coalesce(json_agg(x.name), '[]'::json) as names from (
              select p.name from principals p
                where ${effectiveRole} in (${ADMIN_IN}) and p.organization_id = ${activeMemberships.organizationId} and p.deleted_at is null
              union
              select p.name from principal_members pm join principals p on p.id = pm.principal_id
                where not ${effectiveRole} in (${ADMIN_IN}) and pm.user_id = ${P.userId}::uuid
                  and p.organization_id = ${activeMemberships.organizationId} and p.deleted_at is null
              union
              select p.name from department_members dm
                join departments d on d.id = dm.department_id
                join department_principals dp on dp.department_id = d.id
                join principals p on p.id = dp.principal_id
                where not ${effectiveRole} in (${ADMIN_IN}) and dm.user_id = ${P.userId}::uuid
                  and d.organization_id = ${activeMemberships.organizationId} and d.deleted_at is null and p.deleted_at is null) x
            where ${certificateAuthorities.id} is not null) as pr`,
      sql`true`,
    )
    .orderBy(activeMemberships.organizationName),
);

/** postgres-js and PGlite both parse json; a string is parsed here in case a driver did not. */
const json = <T>(value: unknown): T => (typeof value === "string" ? JSON.parse(value) : value) as T;

export const signingContextRepository = {
  /** `at`: the signing time (the application clock), at which the role is read and the grants' windows are checked. */
  async readUserContext(db: Executor, v: { userId: string; orgId: string | null; keyId: string | null; at: Date }): Promise<UserSigningContext> {
    const rows = await readContext(db, { ...v, at: v.at.toISOString() });
    const first = rows[0]!;
    return {
      serial: BigInt(first.serial),
      key: first.key?.id ? first.key : undefined,
      organizations: rows
        .filter((r) => r.membership?.organizationId)
        .map((r) => ({
          membership: r.membership! as ActiveMembership,
          pastMfaDeadline: r.standing === "past_due",
          ca: r.ca?.id ? r.ca : undefined,
          caKey: r.caKey?.id ? r.caKey : undefined,
          policies: json<Array<StoredPolicy | null>>(r.policies ?? []),
          principals: json<string[]>(r.principals ?? []),
          grantsMayApply: r.grantsMayApply === true,
        })),
    };
  },
};
