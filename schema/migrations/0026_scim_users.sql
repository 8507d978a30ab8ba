CREATE TABLE "scim_users" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"external_id" varchar(255),
	"given_name" varchar(255),
	"family_name" varchar(255),
	"display_name" varchar(255),
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "scim_users" ADD CONSTRAINT "scim_users_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_users" ADD CONSTRAINT "scim_users_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "scim_users_org_external_uq" ON "scim_users" USING btree ("organization_id","external_id") WHERE "scim_users"."external_id" is not null;--> statement-breakpoint
CREATE INDEX "scim_users_org_idx" ON "scim_users" USING btree ("organization_id");