CREATE TABLE "oidc_registration_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"name" varchar(255) NOT NULL,
	"prefix" varchar(32) NOT NULL,
	"token_hash" varchar(64) NOT NULL,
	"max_uses" integer,
	"uses" integer DEFAULT 0 NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "oidc_registration_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD COLUMN "registration_token_id" uuid;--> statement-breakpoint
ALTER TABLE "oidc_registration_tokens" ADD CONSTRAINT "oidc_registration_tokens_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_registration_tokens" ADD CONSTRAINT "oidc_registration_tokens_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "oidc_registration_tokens_org_idx" ON "oidc_registration_tokens" USING btree ("organization_id");--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD CONSTRAINT "oidc_clients_registration_token_id_oidc_registration_tokens_id_fk" FOREIGN KEY ("registration_token_id") REFERENCES "public"."oidc_registration_tokens"("id") ON DELETE no action ON UPDATE no action;