CREATE TYPE "public"."access_request_state" AS ENUM('pending', 'approved', 'rejected', 'cancelled', 'expired');--> statement-breakpoint
CREATE TABLE "access_request_policies" (
	"organization_id" uuid NOT NULL,
	"principal_id" uuid NOT NULL,
	"requestable" boolean DEFAULT true NOT NULL,
	"requester_department_id" uuid,
	"max_minutes" integer NOT NULL,
	"approval_required" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "access_request_policies_organization_id_principal_id_pk" PRIMARY KEY("organization_id","principal_id")
);
--> statement-breakpoint
CREATE TABLE "access_requests" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"principal_id" uuid NOT NULL,
	"principal_name" varchar(255) NOT NULL,
	"state" "access_request_state" NOT NULL,
	"reason" text NOT NULL,
	"requested_minutes" integer NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"decided_by_user_id" uuid,
	"decision_reason" text,
	"decided_at" timestamp with time zone,
	"granted_minutes" integer,
	"grant_starts_at" timestamp with time zone,
	"grant_ends_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "access_request_policies" ADD CONSTRAINT "access_request_policies_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_request_policies" ADD CONSTRAINT "access_request_policies_principal_id_principals_id_fk" FOREIGN KEY ("principal_id") REFERENCES "public"."principals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_request_policies" ADD CONSTRAINT "access_request_policies_requester_department_id_departments_id_fk" FOREIGN KEY ("requester_department_id") REFERENCES "public"."departments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_principal_id_principals_id_fk" FOREIGN KEY ("principal_id") REFERENCES "public"."principals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_decided_by_user_id_users_id_fk" FOREIGN KEY ("decided_by_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "access_requests_user_principal_pending_uq" ON "access_requests" USING btree ("user_id","principal_id") WHERE "access_requests"."state" = 'pending';--> statement-breakpoint
CREATE INDEX "access_requests_org_state_idx" ON "access_requests" USING btree ("organization_id","state");--> statement-breakpoint
CREATE INDEX "access_requests_user_grant_idx" ON "access_requests" USING btree ("user_id","organization_id","grant_ends_at");