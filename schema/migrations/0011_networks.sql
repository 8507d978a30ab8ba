CREATE TYPE "public"."activation_end_reason" AS ENUM('expired', 'logout', 'kill_switch', 'manual_revoke', 'approval_revoked', 'admin_action');--> statement-breakpoint
CREATE TYPE "public"."network_approval_grant_type" AS ENUM('requested', 'assigned');--> statement-breakpoint
CREATE TYPE "public"."network_approval_state" AS ENUM('pending', 'approved', 'rejected', 'revoked', 'suspended');--> statement-breakpoint
CREATE TYPE "public"."network_controller_mode" AS ENUM('controller', 'central');--> statement-breakpoint
CREATE TYPE "public"."device_status" AS ENUM('active', 'inactive');--> statement-breakpoint
CREATE TYPE "public"."kill_switch_scope" AS ENUM('organization', 'global', 'selected_networks');--> statement-breakpoint
CREATE TYPE "public"."device_membership_state" AS ENUM('pending_device_registration', 'pending_request', 'pending_manager_approval', 'approved_inactive', 'joined_deauthorized', 'active_authorized', 'activation_expired', 'suspended', 'revoked', 'rejected');--> statement-breakpoint
CREATE TYPE "public"."network_environment" AS ENUM('production', 'staging', 'development', 'lab');--> statement-breakpoint
CREATE TYPE "public"."network_request_mode" AS ENUM('open', 'approval_required', 'invite_only');--> statement-breakpoint
CREATE TABLE "activation_sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"membership_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"authenticated_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"end_reason" "activation_end_reason",
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "device_memberships" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"portal_network_id" uuid NOT NULL,
	"approval_id" uuid,
	"state" "device_membership_state" NOT NULL,
	"join_seen" boolean DEFAULT false NOT NULL,
	"currently_authorized" boolean DEFAULT false NOT NULL,
	"last_synced_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "devices" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"node_id" char(10) NOT NULL,
	"nickname" varchar(255),
	"hostname" varchar(255),
	"asset_tag" varchar(255),
	"serial_number" varchar(255),
	"status" "device_status" DEFAULT 'active' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "job_leases" (
	"name" varchar(100) PRIMARY KEY NOT NULL,
	"holder" varchar(100) NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"last_run_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "kill_switch_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid,
	"target_user_id" uuid NOT NULL,
	"scope" "kill_switch_scope" NOT NULL,
	"network_ids" jsonb,
	"reason" text,
	"triggered_by_user_id" uuid,
	"sessions_ended" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"lifted_at" timestamp with time zone,
	"lifted_by_user_id" uuid
);
--> statement-breakpoint
CREATE TABLE "network_approvals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"portal_network_id" uuid NOT NULL,
	"grant_type" "network_approval_grant_type" NOT NULL,
	"state" "network_approval_state" NOT NULL,
	"justification" text,
	"granted_by_user_id" uuid,
	"decided_at" timestamp with time zone,
	"decision_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "network_controllers" (
	"organization_id" uuid PRIMARY KEY NOT NULL,
	"mode" "network_controller_mode" NOT NULL,
	"base_url" text NOT NULL,
	"token_sealed" text NOT NULL,
	"controller_address" varchar(10),
	"last_checked_at" timestamp with time zone,
	"updated_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "network_managers" (
	"portal_network_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "network_managers_portal_network_id_user_id_pk" PRIMARY KEY("portal_network_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "portal_networks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"name" varchar(255) NOT NULL,
	"description" text,
	"owner_user_id" uuid,
	"zerotier_network_id" char(16) NOT NULL,
	"environment" "network_environment" DEFAULT 'production' NOT NULL,
	"request_mode" "network_request_mode" DEFAULT 'approval_required' NOT NULL,
	"default_activation_lifetime_minutes" integer DEFAULT 480 NOT NULL,
	"max_activation_lifetime_minutes" integer,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	"cleaned_up_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "activation_sessions" ADD CONSTRAINT "activation_sessions_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "activation_sessions" ADD CONSTRAINT "activation_sessions_membership_id_device_memberships_id_fk" FOREIGN KEY ("membership_id") REFERENCES "public"."device_memberships"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "activation_sessions" ADD CONSTRAINT "activation_sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "activation_sessions" ADD CONSTRAINT "activation_sessions_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_memberships" ADD CONSTRAINT "device_memberships_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_memberships" ADD CONSTRAINT "device_memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_memberships" ADD CONSTRAINT "device_memberships_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_memberships" ADD CONSTRAINT "device_memberships_portal_network_id_portal_networks_id_fk" FOREIGN KEY ("portal_network_id") REFERENCES "public"."portal_networks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_memberships" ADD CONSTRAINT "device_memberships_approval_id_network_approvals_id_fk" FOREIGN KEY ("approval_id") REFERENCES "public"."network_approvals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kill_switch_events" ADD CONSTRAINT "kill_switch_events_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kill_switch_events" ADD CONSTRAINT "kill_switch_events_target_user_id_users_id_fk" FOREIGN KEY ("target_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kill_switch_events" ADD CONSTRAINT "kill_switch_events_triggered_by_user_id_users_id_fk" FOREIGN KEY ("triggered_by_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kill_switch_events" ADD CONSTRAINT "kill_switch_events_lifted_by_user_id_users_id_fk" FOREIGN KEY ("lifted_by_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_approvals" ADD CONSTRAINT "network_approvals_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_approvals" ADD CONSTRAINT "network_approvals_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_approvals" ADD CONSTRAINT "network_approvals_portal_network_id_portal_networks_id_fk" FOREIGN KEY ("portal_network_id") REFERENCES "public"."portal_networks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_approvals" ADD CONSTRAINT "network_approvals_granted_by_user_id_users_id_fk" FOREIGN KEY ("granted_by_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_controllers" ADD CONSTRAINT "network_controllers_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_controllers" ADD CONSTRAINT "network_controllers_updated_by_users_id_fk" FOREIGN KEY ("updated_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_managers" ADD CONSTRAINT "network_managers_portal_network_id_portal_networks_id_fk" FOREIGN KEY ("portal_network_id") REFERENCES "public"."portal_networks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_managers" ADD CONSTRAINT "network_managers_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "network_managers" ADD CONSTRAINT "network_managers_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "portal_networks" ADD CONSTRAINT "portal_networks_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "portal_networks" ADD CONSTRAINT "portal_networks_owner_user_id_users_id_fk" FOREIGN KEY ("owner_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "activation_sessions_membership_open_uq" ON "activation_sessions" USING btree ("membership_id") WHERE "activation_sessions"."ended_at" is null;--> statement-breakpoint
CREATE INDEX "activation_sessions_open_expiry_idx" ON "activation_sessions" USING btree ("expires_at") WHERE "activation_sessions"."ended_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "device_memberships_device_network_live_uq" ON "device_memberships" USING btree ("device_id","portal_network_id") WHERE "device_memberships"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "device_memberships_network_idx" ON "device_memberships" USING btree ("portal_network_id");--> statement-breakpoint
CREATE INDEX "device_memberships_user_idx" ON "device_memberships" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "devices_org_node_live_uq" ON "devices" USING btree ("organization_id","node_id") WHERE "devices"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "devices_user_idx" ON "devices" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "kill_switch_events_target_idx" ON "kill_switch_events" USING btree ("target_user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "network_approvals_user_network_live_uq" ON "network_approvals" USING btree ("user_id","portal_network_id") WHERE "network_approvals"."state" in ('pending', 'approved', 'suspended');--> statement-breakpoint
CREATE INDEX "network_approvals_network_state_idx" ON "network_approvals" USING btree ("portal_network_id","state");--> statement-breakpoint
CREATE UNIQUE INDEX "portal_networks_org_ztid_live_uq" ON "portal_networks" USING btree ("organization_id","zerotier_network_id") WHERE "portal_networks"."deleted_at" is null;