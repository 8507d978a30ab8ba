CREATE TABLE "sso_connections" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"kind" varchar(8) NOT NULL,
	"name" varchar(255) NOT NULL,
	"enabled" boolean DEFAULT false NOT NULL,
	"default_role" varchar(16) DEFAULT 'member' NOT NULL,
	"group_mappings" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"require_sso" boolean DEFAULT false NOT NULL,
	"session_max_age_seconds" integer DEFAULT 28800 NOT NULL,
	"config" jsonb NOT NULL,
	"secret_sealed" text,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "sso_connections_kind_ck" CHECK ("sso_connections"."kind" in ('oidc', 'saml')),
	CONSTRAINT "sso_connections_role_ck" CHECK ("sso_connections"."default_role" in ('admin', 'member', 'guest'))
);
--> statement-breakpoint
CREATE TABLE "sso_identities" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"connection_id" uuid NOT NULL,
	"subject" varchar(255) NOT NULL,
	"user_id" uuid NOT NULL,
	"email" varchar(320),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_login_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "sso_connections" ADD CONSTRAINT "sso_connections_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_connections" ADD CONSTRAINT "sso_connections_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_identities" ADD CONSTRAINT "sso_identities_connection_id_sso_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."sso_connections"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_identities" ADD CONSTRAINT "sso_identities_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sso_connections_org_idx" ON "sso_connections" USING btree ("organization_id") WHERE "sso_connections"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "sso_identities_subject_uq" ON "sso_identities" USING btree ("connection_id","subject");--> statement-breakpoint
CREATE UNIQUE INDEX "sso_identities_user_uq" ON "sso_identities" USING btree ("connection_id","user_id");