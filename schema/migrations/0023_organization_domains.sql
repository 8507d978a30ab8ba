CREATE TABLE "organization_domains" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"domain" varchar(253) NOT NULL,
	"verification_token" varchar(64) NOT NULL,
	"status" varchar(16) DEFAULT 'pending' NOT NULL,
	"verified_at" timestamp with time zone,
	"last_checked_at" timestamp with time zone,
	"last_check_error" text,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"next_check_at" timestamp with time zone,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "organization_domains_token_uq" UNIQUE("verification_token"),
	CONSTRAINT "organization_domains_status_ck" CHECK ("organization_domains"."status" in ('pending', 'verified', 'lapsed'))
);
--> statement-breakpoint
ALTER TABLE "organization_domains" ADD CONSTRAINT "organization_domains_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organization_domains" ADD CONSTRAINT "organization_domains_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "organization_domains_verified_uq" ON "organization_domains" USING btree ("domain") WHERE "organization_domains"."status" = 'verified' and "organization_domains"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "organization_domains_org_domain_uq" ON "organization_domains" USING btree ("organization_id","domain") WHERE "organization_domains"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "organization_domains_due_idx" ON "organization_domains" USING btree ("next_check_at") WHERE "organization_domains"."status" = 'verified' and "organization_domains"."deleted_at" is null;