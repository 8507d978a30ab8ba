CREATE TABLE "host_enrollment_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"token_hash" varchar(64) NOT NULL,
	"prefix" varchar(32) NOT NULL,
	"names" text[] NOT NULL,
	"description" text,
	"expires_at" timestamp with time zone NOT NULL,
	"created_by" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"used_at" timestamp with time zone,
	"host_id" uuid,
	"revoked_at" timestamp with time zone,
	"revoked_by" uuid
);
--> statement-breakpoint
CREATE TABLE "ssh_hosts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"name" varchar(255) NOT NULL,
	"names" text[] NOT NULL,
	"host_keys" jsonb NOT NULL,
	"certificates" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"cert_valid_before" timestamp with time zone,
	"cert_valid_after" timestamp with time zone,
	"last_renewed_at" timestamp with time zone,
	"enrolled_at" timestamp with time zone NOT NULL,
	"enrollment_token_id" uuid,
	"enrolled_by" uuid,
	"renew_challenge_hash" varchar(64),
	"renew_challenge_expires_at" timestamp with time zone,
	"retired_at" timestamp with time zone,
	"retired_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "host_enrollment_tokens" ADD CONSTRAINT "host_enrollment_tokens_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "host_enrollment_tokens" ADD CONSTRAINT "host_enrollment_tokens_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "host_enrollment_tokens" ADD CONSTRAINT "host_enrollment_tokens_revoked_by_users_id_fk" FOREIGN KEY ("revoked_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ssh_hosts" ADD CONSTRAINT "ssh_hosts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ssh_hosts" ADD CONSTRAINT "ssh_hosts_enrollment_token_id_host_enrollment_tokens_id_fk" FOREIGN KEY ("enrollment_token_id") REFERENCES "public"."host_enrollment_tokens"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ssh_hosts" ADD CONSTRAINT "ssh_hosts_enrolled_by_users_id_fk" FOREIGN KEY ("enrolled_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ssh_hosts" ADD CONSTRAINT "ssh_hosts_retired_by_users_id_fk" FOREIGN KEY ("retired_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "host_enrollment_tokens_hash_uq" ON "host_enrollment_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "host_enrollment_tokens_org_idx" ON "host_enrollment_tokens" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "ssh_hosts_org_idx" ON "ssh_hosts" USING btree ("organization_id","name");--> statement-breakpoint
CREATE INDEX "ssh_hosts_live_idx" ON "ssh_hosts" USING btree ("organization_id") WHERE "ssh_hosts"."retired_at" is null;