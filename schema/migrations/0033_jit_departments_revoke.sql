CREATE TABLE "department_access_policies" (
	"organization_id" uuid NOT NULL,
	"department_id" uuid NOT NULL,
	"requestable" boolean DEFAULT true NOT NULL,
	"requester_department_id" uuid,
	"max_minutes" integer NOT NULL,
	"approval_required" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "department_access_policies_organization_id_department_id_pk" PRIMARY KEY("organization_id","department_id")
);
--> statement-breakpoint
ALTER TABLE "access_requests" ALTER COLUMN "principal_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "access_requests" ALTER COLUMN "principal_name" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "access_requests" ADD COLUMN "kind" varchar(16) DEFAULT 'principal' NOT NULL;--> statement-breakpoint
ALTER TABLE "access_requests" ADD COLUMN "department_id" uuid;--> statement-breakpoint
ALTER TABLE "access_requests" ADD COLUMN "department_name" varchar(255);--> statement-breakpoint
ALTER TABLE "access_requests" ADD COLUMN "revoked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "access_requests" ADD COLUMN "revoked_by_user_id" uuid;--> statement-breakpoint
ALTER TABLE "access_requests" ADD COLUMN "revoke_reason" text;--> statement-breakpoint
ALTER TABLE "department_access_policies" ADD CONSTRAINT "department_access_policies_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "department_access_policies" ADD CONSTRAINT "department_access_policies_department_id_departments_id_fk" FOREIGN KEY ("department_id") REFERENCES "public"."departments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "department_access_policies" ADD CONSTRAINT "department_access_policies_requester_department_id_departments_id_fk" FOREIGN KEY ("requester_department_id") REFERENCES "public"."departments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_department_id_departments_id_fk" FOREIGN KEY ("department_id") REFERENCES "public"."departments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_revoked_by_user_id_users_id_fk" FOREIGN KEY ("revoked_by_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "access_requests_user_department_pending_uq" ON "access_requests" USING btree ("user_id","department_id") WHERE "access_requests"."state" = 'pending';--> statement-breakpoint
ALTER TABLE "access_requests" ADD CONSTRAINT "access_requests_target_ck" CHECK (("access_requests"."kind" = 'principal' and "access_requests"."principal_id" is not null and "access_requests"."principal_name" is not null and "access_requests"."department_id" is null) or ("access_requests"."kind" = 'department' and "access_requests"."department_id" is not null and "access_requests"."department_name" is not null and "access_requests"."principal_id" is null));