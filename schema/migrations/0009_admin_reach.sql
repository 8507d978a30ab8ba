CREATE TYPE "public"."email_verified_via" AS ENUM('email_link', 'provider', 'superadmin');--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified_via" "email_verified_via";--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "managed_by_organization_id" uuid;--> statement-breakpoint
ALTER TABLE "org_invites" ADD COLUMN "provisions_account" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_managed_by_organization_id_organizations_id_fk" FOREIGN KEY ("managed_by_organization_id") REFERENCES "public"."organizations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "users_managed_by_idx" ON "users" USING btree ("managed_by_organization_id") WHERE "users"."managed_by_organization_id" is not null;