CREATE TABLE "role_access_policies" (
	"organization_id" uuid NOT NULL,
	"role" "org_role" NOT NULL,
	"requestable" boolean DEFAULT true NOT NULL,
	"requester_department_id" uuid,
	"max_minutes" integer NOT NULL,
	"approval_required" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "role_access_policies_organization_id_role_pk" PRIMARY KEY("organization_id","role"),
	CONSTRAINT "role_access_policies_role_ck" CHECK ("role_access_policies"."role" in ('admin', 'member'))
);
--> statement-breakpoint
ALTER TABLE "access_requests" DROP CONSTRAINT "access_requests_target_ck";--> statement-breakpoint
ALTER TABLE "access_requests" ADD COLUMN "requested_role" "org_role";--> statement-breakpoint
ALTER TABLE "role_access_policies" ADD CONSTRAINT "role_access_policies_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "role_access_policies" ADD CONSTRAINT "role_access_policies_requester_department_id_departments_id_fk" FOREIGN KEY ("requester_department_id") REFERENCES "public"."departments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "access_requests_user_role_pending_uq" ON "access_requests" USING btree ("user_id","organization_id") WHERE "access_requests"."state" = 'pending' and "access_requests"."kind" = 'role';--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_target_ck" CHECK (("access_requests"."kind" = 'principal' and "access_requests"."principal_id" is not null and "access_requests"."principal_name" is not null and "access_requests"."department_id" is null and "access_requests"."requested_role" is null) or ("access_requests"."kind" = 'department' and "access_requests"."department_id" is not null and "access_requests"."department_name" is not null and "access_requests"."principal_id" is null and "access_requests"."requested_role" is null) or ("access_requests"."kind" = 'role' and "access_requests"."requested_role" in ('admin', 'member') and "access_requests"."principal_id" is null and "access_requests"."department_id" is null));--> statement-breakpoint
-- The one definition of a member's role (issue 37): the stronger of the stored role and a role grant
-- in force at `p_at` (the application's clock, passed by every reader: tests and the injected clock
-- agree). A grant counts only if given during this membership: leaving ends it, coming back revives
-- none. Enum order is owner < admin < member < guest, so the stronger role is the least.
CREATE OR REPLACE FUNCTION effective_org_role(p_membership uuid, p_at timestamptz) RETURNS org_role
LANGUAGE sql STABLE AS $$
  SELECT least(m.role, (
    SELECT min(ar.requested_role) FROM access_requests ar
    WHERE ar.user_id = m.user_id AND ar.organization_id = m.organization_id AND ar.kind = 'role'
      AND ar.state = 'approved' AND ar.grant_starts_at <= p_at AND ar.grant_ends_at > p_at
      AND ar.grant_starts_at >= m.created_at))
  FROM org_memberships m WHERE m.id = p_membership
$$;
--> statement-breakpoint
-- When the role above the stored one ends (null: not elevated at `p_at`): the latest end among the
-- grants in force of the effective role. Certificates signed while elevated stop there.
CREATE OR REPLACE FUNCTION org_role_elevated_until(p_membership uuid, p_at timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
  SELECT max(ar.grant_ends_at) FROM org_memberships m
  JOIN access_requests ar ON ar.user_id = m.user_id AND ar.organization_id = m.organization_id
  WHERE m.id = p_membership AND ar.kind = 'role' AND ar.state = 'approved'
    AND ar.grant_starts_at <= p_at AND ar.grant_ends_at > p_at AND ar.grant_starts_at >= m.created_at
    AND ar.requested_role < m.role AND ar.requested_role = effective_org_role(p_membership, p_at)
$$;
--> statement-breakpoint
-- A role grant given, ended early or lapsing changes the person's list of organizations (their
-- role in it): announce it as a membership change (migration 0018), so no cache keeps the role.
CREATE OR REPLACE FUNCTION keyward_notify_role_grant_changed() RETURNS trigger AS $$
BEGIN
  IF NEW.kind = 'role' THEN
    PERFORM pg_notify('keyward_changes', 'memberships:' || NEW.user_id::text);
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER access_requests_notify_role_changed
  AFTER INSERT OR UPDATE ON access_requests
  FOR EACH ROW EXECUTE FUNCTION keyward_notify_role_grant_changed();
